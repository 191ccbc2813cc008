/**
 * Errors the HTTP client raises: "the server said no" (`ApiError` and subclasses), "could not
 * reach it" (`NetworkError`), "it answered something that is not the API" (`BadResponseError`,
 * `ResponseSchemaError`). Server text is redacted before it is quoted, so no API key leaks.
 */
import { BothostError } from "../errors/bothost-error.ts";
import type { ServerErrorCode } from "../wire/responses.ts";

/** A server error code, or `HTTP_<status>` when the error body carries none (405, 500, proxies). */
export type ApiErrorCode = ServerErrorCode | `HTTP_${number}` | (string & {});

/** What to do about a server error code, appended to the message. */
const hints: Partial<Record<string, string>> = {
  BAD_EVENT_QUEUE_ID: "The event queue expired or was deleted; register a new one with events.register().",
  STREAM_DOES_NOT_EXIST: "Check the channel id or name, and that the bot can see the channel.",
  UNAUTHORIZED_PRINCIPAL: "The account lacks the role this call needs; ask an administrator.",
  REQUEST_VARIABLE_MISSING: "Pass the parameter named in `data.var_name`.",
  REQUEST_CONFUSING_VAR: "Pass only one of the two parameters named in `data`.",
  INVALID_JSON:
    "The request's whole body must be valid JSON (an incoming webhook's payload); with request(), pass a parameter's arrays and objects as values, not strings.",
  CHANNEL_ALREADY_EXISTS: "Pick another channel name.",
};

/**
 * The server answered with an error body (`result: "error"`) or a non-2xx JSON status.
 *
 * @example
 * ```ts
 * try { await client.messages.send({ type: "channel", to: 99, topic: "t", content: "hi" }); }
 * catch (err) { if (err instanceof ApiError && err.code === "STREAM_DOES_NOT_EXIST") … }
 * ```
 */
export class ApiError extends BothostError<ApiErrorCode> {
  override readonly name: string = "ApiError";
  /** HTTP status, e.g. 400. */
  readonly status: number;
  /** The server's human-readable (localized) message; branch on `code`, not on this. */
  readonly msg: string;
  /** `"METHOD /path"`, e.g. `"POST /messages"`. */
  readonly endpoint: string;
  /** Condition-specific fields of the body, e.g. `stream_id`, `queue_id`, `var_name`, `retry-after`. */
  readonly data: Readonly<Record<string, unknown>>;

  constructor(init: ApiErrorInit, message?: string) {
    const hint = hints[init.code];
    super(
      init.code,
      message ??
        `${init.endpoint} failed: ${init.status} ${init.code}: ${hint ? `${sentence(init.msg)} ${hint}` : init.msg}`,
    );
    this.status = init.status;
    this.msg = init.msg;
    this.endpoint = init.endpoint;
    this.data = init.data;
  }
}

/** The server's text as a sentence before a hint: most of its messages end without a full stop. */
function sentence(msg: string): string {
  return /[.!?…:]$/.test(msg.trimEnd()) || msg.trim() === "" ? msg : `${msg}.`;
}

export type ApiErrorInit = Pick<ApiError, "status" | "code" | "msg" | "endpoint" | "data">;

/**
 * The server refused to change a user group's members for want of permission (400 BAD_REQUEST
 * "Insufficient permission"): an administrator must let the account add or remove members.
 *
 * @example
 * ```ts
 * try { await ctx.api.userGroups.updateMembers(groupId, { add: [userId] }); }
 * catch (err) { if (err instanceof GroupPermissionError) await ctx.send({ type: "direct", to: admins, content: err.fix }); }
 * ```
 */
export class GroupPermissionError extends ApiError {
  override readonly name: string = "GroupPermissionError";
  /** The user group the call would have changed. */
  readonly groupId: number;
  /** What an administrator can change to allow it, in a sentence. */
  readonly fix: string;

  constructor(init: ApiErrorInit & { groupId: number; change: "add" | "remove" | "both" }) {
    const add = `"Who can add members to this group" (can_add_members_group)`;
    const remove = `"Who can remove members from this group" (can_remove_members_group)`;
    const setting = init.change === "add" ? add : init.change === "remove" ? remove : `${add}, ${remove}`;
    const verb = { add: "add members to", remove: "remove members from", both: "change the members of" }[
      init.change
    ];
    const fix =
      `An administrator can allow it: in the group's settings, add the account to ${setting} ` +
      `or "Who can administer this group" (can_manage_group); or add it to the organization's ` +
      `"Who can administer all user groups" (can_manage_all_groups). A system group (role:…) cannot be changed.`;
    super(
      init,
      `${init.endpoint}: the account may not ${verb} ` +
        `user group ${init.groupId} (${init.status} ${init.code}: ${init.msg}). ${fix}`,
    );
    this.groupId = init.groupId;
    this.fix = fix;
  }
}

/**
 * Any HTTP 401. On `/api/v1` every credential problem (wrong key, deactivated user or
 * organization, wrong subdomain) is a 401, whatever its `code`. Fatal: never retried.
 */
export class AuthError extends ApiError {
  override readonly name: string = "AuthError";
  /** The email the client authenticated with (never the key). */
  readonly email: string;

  constructor(init: ApiErrorInit & { email: string; origin: string }) {
    super(
      init,
      `${init.endpoint}: the server at ${init.origin} rejected the credentials of ${init.email} ` +
        `(401 ${init.code}: ${init.msg}). The email or API key is wrong, or the account or organization ` +
        `is deactivated. Download a fresh zuliprc for this bot (Settings → Bots) or fix the email and ` +
        `API key in its configuration, and check that the bot is still active.`,
    );
    this.email = init.email;
  }
}

/**
 * What a bot the server rejected at 401 shows (status, `/readyz`, the log): the way back. A reload
 * restarts a bot only when its resolved config entry changed; it reads the config file, the
 * `api_key_file` and the zuliprc again, so a fixed key in any of them counts. `${VAR}` values come
 * from the daemon's environment, which a reload cannot change, and an account reactivated with
 * an unchanged key changes no entry: both take a restart of the daemon.
 */
export const AUTH_REJECTED =
  "the server rejected the bot's credentials: fix its email or API key (in the config, its " +
  "api_key_file or its zuliprc), then reload; a key from an environment variable, or an account " +
  "reactivated with an unchanged key, takes a restart of the daemon";

/** {@link AUTH_REJECTED} as said when the daemon stops for it (every bot's key refused): nothing is left to reload. */
export const AUTH_REJECTED_AT_STOP =
  "the server rejected the bot's credentials: fix its email or API key (in the config, its " +
  "api_key_file, its zuliprc or the environment), then start the daemon again";

/** HTTP 429 after the client used up its retries (or the wait exceeded `retry.maxRateLimitWaitMs`). */
export class RateLimitError extends ApiError {
  override readonly name: string = "RateLimitError";
  /** How long the server asked to wait, in milliseconds. */
  readonly retryAfterMs: number;

  /**
   * `limits`: the per-minute and per-hour budget the client keeps to for this account (configured,
   * or as the server reported it), undefined when its rate limit is off (`rateLimit: false`);
   * `serverLimit`: the limit the 429's own headers report, if any.
   */
  constructor(
    init: ApiErrorInit & {
      retryAfterMs: number;
      limits: { perMinute: number; perHour: number } | undefined;
      serverLimit?: number | undefined;
    },
  ) {
    const reported =
      init.serverLimit === undefined ? "" : `; the server reports a limit of ${init.serverLimit}`;
    const kept = init.limits
      ? `this client keeps to ${init.limits.perMinute} per minute and ${init.limits.perHour} per hour for this account`
      : "this client's rate limit is off (rateLimit: false), so it holds no call back";
    super(
      init,
      `${init.endpoint}: rate limit hit (429 ${init.code}); the server asks to wait ` +
        `${(init.retryAfterMs / 1000).toFixed(3)} s. Make fewer calls (${kept}${reported}) or retry after the wait.`,
    );
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** The request never produced a response: DNS, refused or reset connection, or a timeout. */
export class NetworkError extends BothostError<"NETWORK_ERROR"> {
  override readonly name: string = "NetworkError";
  readonly endpoint: string;
  /** True when no response came within the request's timeout. */
  readonly timedOut: boolean;
  /** False only when the request certainly never reached the server (e.g. connection refused). */
  readonly requestSent: boolean;

  constructor(init: {
    endpoint: string;
    origin: string;
    detail: string;
    timedOut: boolean;
    requestSent: boolean;
    cause: unknown;
  }) {
    super(
      "NETWORK_ERROR",
      `${init.endpoint}: could not reach the server at ${init.origin}: ${init.detail}. ` +
        `Check the server URL, the network and that the server is up.`,
      { cause: init.cause },
    );
    this.endpoint = init.endpoint;
    this.timedOut = init.timedOut;
    this.requestSent = init.requestSent;
  }
}

/** The server (or a proxy in front of it) answered with a body that is not JSON. Retryable. */
export class BadResponseError extends BothostError<"BAD_RESPONSE"> {
  override readonly name: string = "BadResponseError";
  readonly endpoint: string;
  readonly status: number;
  readonly contentType: string;

  constructor(init: { endpoint: string; status: number; contentType: string; snippet: string }) {
    super(
      "BAD_RESPONSE",
      `${init.endpoint}: the server answered ${init.status} with a non-JSON body ` +
        `(content-type ${init.contentType || "none"}): ${JSON.stringify(init.snippet)}. The server or a ` +
        `proxy in front of it is failing, or the URL does not point at the chat server; safe calls are ` +
        `retried, so if this persists check the server's and the proxy's logs.`,
    );
    this.endpoint = init.endpoint;
    this.status = init.status;
    this.contentType = init.contentType;
  }
}

/** The server's answer passed the client's cap on a body's size; the call is not retried. */
export class ResponseTooLargeError extends BothostError<"RESPONSE_TOO_LARGE"> {
  override readonly name: string = "ResponseTooLargeError";
  readonly endpoint: string;

  constructor(init: { endpoint: string; maxBytes: number; cause: unknown }) {
    super(
      "RESPONSE_TOO_LARGE",
      `${init.endpoint}: the server's answer is larger than ${init.maxBytes} bytes, the most bothost ` +
        "reads of one answer; the URL may point at something other than the chat server.",
      { cause: init.cause },
    );
    this.endpoint = init.endpoint;
  }
}

/** A success body did not match the shape bothost expects (a field missing or of another type). */
export class ResponseSchemaError extends BothostError<"UNEXPECTED_RESPONSE"> {
  override readonly name: string = "ResponseSchemaError";
  readonly endpoint: string;
  /** `path: problem` for each mismatching field, e.g. `"user.role: Invalid input"`. */
  readonly issues: readonly string[];

  constructor(init: { endpoint: string; issues: string[] }) {
    super(
      "UNEXPECTED_RESPONSE",
      `${init.endpoint}: the server's response does not have the expected shape: ${init.issues.join("; ")}. ` +
        `The server may be of a version bothost does not know; use client.request() without a schema ` +
        `to read the raw body, and report the mismatch.`,
    );
    this.endpoint = init.endpoint;
    this.issues = init.issues;
  }
}

/** The server's feature level is too old for this call. */
export class UnsupportedFeatureError extends BothostError<"UNSUPPORTED_FEATURE"> {
  override readonly name: string = "UnsupportedFeatureError";
  readonly feature: string;
  readonly requiredLevel: number;
  readonly serverLevel: number;

  constructor(init: { feature: string; what: string; requiredLevel: number; serverLevel: number }) {
    super(
      "UNSUPPORTED_FEATURE",
      `${init.what} needs server feature level ${init.requiredLevel} or newer (feature "${init.feature}"), ` +
        `but the server has feature level ${init.serverLevel}. Upgrade the server or avoid this call.`,
    );
    this.feature = init.feature;
    this.requiredLevel = init.requiredLevel;
    this.serverLevel = init.serverLevel;
  }
}

/** `createClient` options or a zuliprc file are wrong; the message names the option or the line. */
export class ClientConfigError extends BothostError<"CLIENT_CONFIG_INVALID"> {
  override readonly name: string = "ClientConfigError";
  constructor(message: string, options?: { cause?: unknown }) {
    super("CLIENT_CONFIG_INVALID", message, options);
  }
}

export const isApiError = (err: unknown): err is ApiError => err instanceof ApiError;
export const isAuthError = (err: unknown): err is AuthError => err instanceof AuthError;
export const isRateLimitError = (err: unknown): err is RateLimitError => err instanceof RateLimitError;
export const isNetworkError = (err: unknown): err is NetworkError => err instanceof NetworkError;
