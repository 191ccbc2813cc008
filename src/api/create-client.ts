/**
 * `createClient`: one authenticated client per bot account, with typed methods per resource.
 */
import { readFileSync } from "node:fs";
import type { Dispatcher } from "undici";
import { type Clock, realClock } from "../time/clock.ts";
import { type CapturedCall, capturing } from "./capture.ts";
import { sharedPool, type TlsOptions } from "./connection-pools.ts";
import { ClientConfigError } from "./errors.ts";
import type { ServerState } from "./feature-level.ts";
import { type Logger, silentLogger } from "./logger.ts";
import { createSlidingWindowLimiter, unlimited } from "./rate-limiter.ts";
import { channelFoldersApi } from "./resources/channel-folders.ts";
import { channelsApi } from "./resources/channels.ts";
import type { ResourceContext } from "./resources/context.ts";
import { eventsApi } from "./resources/events.ts";
import { messagesApi } from "./resources/messages.ts";
import { pushTokensApi } from "./resources/push-tokens.ts";
import { reactionsApi } from "./resources/reactions.ts";
import { realmApi } from "./resources/realm.ts";
import { savedSnippetsApi } from "./resources/saved-snippets.ts";
import { scheduledMessagesApi } from "./resources/scheduled-messages.ts";
import { serverApi } from "./resources/server.ts";
import { typingApi } from "./resources/typing.ts";
import { userGroupsApi } from "./resources/user-groups.ts";
import { usersApi } from "./resources/users.ts";
import { type RetryOptions, resolveRetryPolicy } from "./retry.ts";
import { parseServerAddress } from "./site-url.ts";
import { createTransport, type RequestFn } from "./transport.ts";
import { defaultUserAgent } from "./version.ts";
import { readZuliprc } from "./zuliprc.ts";

/** Options shared by both ways of naming the account. */
export interface ClientCommonOptions {
  /** Default `bothost/<version>`. Do not pose as a UI client (NOTES §13). */
  userAgent?: string;
  /** Send through this undici dispatcher instead of the pool shared per server origin. */
  dispatcher?: Dispatcher;
  /** pino or anything with debug/info/warn/error; default silent. */
  logger?: Logger;
  /** Client-side limit, default 200 calls per sliding minute; `false` turns it off. */
  rateLimit?: { perMinute?: number } | false;
  /** Retry settings; `false` turns retries off. */
  retry?: RetryOptions | false;
  /** The server's feature level, if known; otherwise learned from events.register or server.settings. */
  featureLevel?: number;
  /** Whether the account is a bot, if known; otherwise learned from users.me(). */
  isBot?: boolean;
  /** Timeout of ordinary calls in milliseconds (headers, and between body chunks). Default 30 000. */
  timeoutMs?: number;
  /** Time source for the limiter and retry waits (the project's injectable clock); for tests. */
  clock?: Clock;
  /** Called after every response (status 0: none arrived), e.g. to count calls by endpoint and status. */
  onResponse?: (info: { endpoint: string; status: number; ms: number }) => void;
  /** Called each time a call waited for a rate limit (the client's own, or a 429's delay). */
  onRateLimitWait?: (info: { endpoint: string; ms: number }) => void;
  /**
   * Capture instead of act: calls that would change something on the server (send, react, report,
   * schedule…) are not sent but passed here and answered as the server would; reads and the bot's
   * own event queue still go to the server. For backtests and `dry_run`.
   */
  capture?: (call: CapturedCall) => void;
}

/** Credentials given directly, or read from a zuliprc file (`[api]` email, key, site). */
export type ClientOptions = ClientCommonOptions &
  (
    | { url: string; email: string; apiKey: string; zuliprc?: undefined }
    | { zuliprc: string; url?: undefined; email?: undefined; apiKey?: undefined }
  );

/** An authenticated client. Create one per bot account; connections are pooled per server. */
export interface Client {
  /** The server's origin, e.g. "https://chat.example.org". */
  readonly origin: string;
  /** The account's email (the API key is never exposed). */
  readonly email: string;
  /** The server's feature level; `undefined` until learned (requests then use the modern form). */
  featureLevel: number | undefined;
  /** Whether the account is a bot; `undefined` until learned. */
  isBot: boolean | undefined;
  /** The escape hatch: any endpoint, e.g. `client.request("GET", "/users/me/alert_words")`. */
  readonly request: RequestFn;
  readonly events: ReturnType<typeof eventsApi>;
  readonly messages: ReturnType<typeof messagesApi>;
  readonly scheduledMessages: ReturnType<typeof scheduledMessagesApi>;
  readonly typing: ReturnType<typeof typingApi>;
  readonly users: ReturnType<typeof usersApi>;
  readonly realm: ReturnType<typeof realmApi>;
  readonly channelFolders: ReturnType<typeof channelFoldersApi>;
  readonly channels: ReturnType<typeof channelsApi>;
  readonly userGroups: ReturnType<typeof userGroupsApi>;
  readonly savedSnippets: ReturnType<typeof savedSnippetsApi>;
  readonly pushTokens: ReturnType<typeof pushTokensApi>;
  readonly reactions: ReturnType<typeof reactionsApi>;
  readonly server: ReturnType<typeof serverApi>;
}

/**
 * Create a client for one account.
 *
 * @example
 * ```ts
 * const client = createClient({ url: "https://chat.example.org", email: "echo-bot@chat.example.org", apiKey });
 * // or: createClient({ zuliprc: "./echo-bot.zuliprc", logger: pino() })
 * const { id } = await client.messages.send({ type: "channel", to: 5, topic: "hello", content: "Hi!" });
 * ```
 */
export function createClient(options: ClientOptions): Client {
  const { site, email, apiKey, tls, where } = resolveCredentials(options);
  const { origin, apiBase } = parseServerAddress(site, where);
  const clock = options.clock ?? realClock;
  const timeoutMs = positive(options.timeoutMs, "timeoutMs") ?? 30_000;
  const perMinute =
    options.rateLimit === false
      ? undefined
      : (positive(options.rateLimit?.perMinute, "rateLimit.perMinute") ?? 200);
  const logger = options.logger?.child?.({ component: "api", email }) ?? options.logger ?? silentLogger;
  const state: ServerState = { featureLevel: options.featureLevel, isBot: options.isBot };
  const transport = createTransport({
    origin,
    apiBase,
    dispatcher: options.dispatcher ?? sharedPool(origin, tls),
    email,
    apiKey,
    userAgent: options.userAgent ?? defaultUserAgent,
    logger,
    limiter:
      perMinute === undefined
        ? unlimited
        : createSlidingWindowLimiter({ limit: perMinute, windowMs: 60_000, clock }),
    retry: resolveRetryPolicy(options.retry),
    clock,
    timeoutMs,
    onResponse: options.onResponse,
    onRateLimitWait: options.onRateLimitWait,
  });
  const request = options.capture ? capturing(transport, options.capture) : transport;
  const ctx: ResourceContext = { request, state, logger };
  return {
    origin,
    email,
    get featureLevel() {
      return state.featureLevel;
    },
    set featureLevel(level) {
      state.featureLevel = level;
    },
    get isBot() {
      return state.isBot;
    },
    set isBot(value) {
      state.isBot = value;
    },
    request,
    events: eventsApi(ctx),
    messages: messagesApi(ctx),
    scheduledMessages: scheduledMessagesApi(ctx),
    typing: typingApi(ctx),
    users: usersApi(ctx),
    realm: realmApi(ctx),
    channelFolders: channelFoldersApi(ctx),
    channels: channelsApi(ctx),
    userGroups: userGroupsApi(ctx),
    savedSnippets: savedSnippetsApi(ctx),
    pushTokens: pushTokensApi(ctx),
    reactions: reactionsApi(ctx),
    server: serverApi(ctx),
  };
}

function resolveCredentials(options: ClientOptions): {
  site: string;
  email: string;
  apiKey: string;
  tls: TlsOptions;
  where: string;
} {
  if (options.zuliprc !== undefined) {
    const rc = readZuliprc(options.zuliprc);
    const tls: TlsOptions = {};
    if (rc.insecure) tls.rejectUnauthorized = false;
    if (rc.certBundle) tls.ca = readCertBundle(rc.certBundle, options.zuliprc);
    return {
      site: rc.site,
      email: rc.email,
      apiKey: rc.apiKey,
      tls,
      where: `\`site\` in ${options.zuliprc}`,
    };
  }
  for (const name of ["url", "email", "apiKey"] as const) {
    const value = options[name];
    if (typeof value !== "string" || value.trim() === "") {
      throw new ClientConfigError(
        `createClient: option \`${name}\` is missing or empty. Pass \`url\`, \`email\` and \`apiKey\`, ` +
          `or \`zuliprc\` with the path of the bot's zuliprc file.`,
      );
    }
  }
  return {
    site: options.url,
    email: options.email.trim(),
    apiKey: options.apiKey.trim(),
    tls: {},
    where: "createClient option `url`",
  };
}

function readCertBundle(file: string, zuliprc: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new ClientConfigError(`Cannot read cert_bundle ${file} named in ${zuliprc}.`, { cause: err });
  }
}

function positive(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value <= 0) {
    throw new ClientConfigError(`createClient: option \`${name}\` must be a positive number, got ${value}.`);
  }
  return value;
}
