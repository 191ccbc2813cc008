/**
 * The transport: one call to the server, with wire encoding, authentication, timeouts, the
 * account's call budgets (src/api/rate-budget.ts), retries (when and how long: retry-policy.ts),
 * error classification and response validation. Every typed method is built on it, and
 * `client.request()` exposes it as the escape hatch.
 */
import type { Dispatcher } from "undici";
import type { z } from "zod";
import type { Clock } from "../time/clock.ts";
import type { CallLane } from "./budget-line.ts";
import { budgetWait, takeTold } from "./budget-waits.ts";
import { encodeParams, type Params } from "./encode.ts";
import {
  ApiError,
  AuthError,
  BadResponseError,
  NetworkError,
  RateLimitError,
  ResponseSchemaError,
  ResponseTooLargeError,
} from "./errors.ts";
import type { ServerState } from "./feature-level.ts";
import type { Logger } from "./logger.ts";
import type { BudgetLimits, BudgetSlot, RateBudget } from "./rate-budget.ts";
import { ResponseTooLarge, requestText, type TextResponse } from "./request-text.ts";
import {
  decideRetry,
  defaultRetryPolicy,
  type RetryOptions,
  retryAfterMs,
  withRetry,
} from "./retry-policy.ts";
import { sleep } from "./sleep.ts";

/** A wait for the rate budget this long is logged (at most once a minute). */
const SLOW_BUDGET_WAIT_MS = 5_000;

export type HttpMethod = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

/** Per-call options of `client.request()` and of every typed method. */
export interface RequestOptions<T = unknown> {
  /** Abort the call: the request, a rate-limit wait and a retry backoff alike. */
  signal?: AbortSignal;
  /** Time allowed for the response headers, and between body chunks. Default: the client's. */
  timeoutMs?: number;
  /** Validate the success body (minus `result`/`msg`); unknown fields pass through if the schema is loose. */
  schema?: z.ZodType<T>;
  /** May the call safely reach the server twice? Default: true for GET and DELETE, false otherwise. */
  idempotent?: boolean;
  /** Send credentials (default true); GET /server_settings works without. */
  auth?: boolean;
  /** `path` is below the server's origin, not below its API (a static file such as the emoji data). */
  site?: boolean;
  /** Override the client's retry settings for this call; `false`: one attempt only. */
  retry?: RetryOptions | false;
  /** A start reserved for this call in its bucket (`budget.of(…).reserve()`): its first attempt takes it. */
  slot?: BudgetSlot;
  /**
   * Which calls go first when the account's budget is short: `live` (the default, or the lane
   * its `signal` was given) before `background`, which still gets a bounded share (budget-line.ts).
   */
  lane?: CallLane;
}

/**
 * Call `METHOD /api/v1<path>` with `params` (query string for GET, form body otherwise) and
 * return the success body without `result` and `msg`.
 */
export type RequestFn = <T = Record<string, unknown>>(
  method: HttpMethod,
  path: string,
  params?: Params,
  options?: RequestOptions<T>,
) => Promise<T>;

/** Options every typed method takes last. */
export type CallOptions = Pick<RequestOptions, "signal" | "timeoutMs" | "retry" | "slot" | "lane">;

/** What every resource module receives from `createClient`. */
export interface ResourceContext {
  state: ServerState;
  logger: Logger;
  /** `request` for typed methods: any params object; the schema's output, or nothing without one. */
  call<T = void>(
    method: HttpMethod,
    path: string,
    params: object,
    options: RequestOptions<unknown>,
    schema?: z.ZodType<T>,
  ): Promise<T>;
}

export interface TransportConfig {
  origin: string;
  apiBase: string;
  dispatcher: Dispatcher;
  /**
   * Where the event queue's long polls (GET /events) go instead, if set: a connection of the
   * account's own, so a poll never searches a pool of every other bot's parked polls.
   */
  pollDispatcher?: (() => Dispatcher) | undefined;
  email: string;
  apiKey: string;
  userAgent: string;
  logger: Logger;
  /** The account's budgets: every call waits for room in its bucket and teaches it the server's figures. */
  budget: RateBudget;
  retry: RetryOptions | false | undefined;
  clock: Clock;
  timeoutMs: number;
  onResponse?: ((info: { endpoint: string; status: number; ms: number }) => void) | undefined;
  onRateLimitWait?: ((info: { endpoint: string; ms: number }) => void) | undefined;
}

// Failures where the request certainly never left this machine: safe to repeat any call.
const notSentCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
const connectTimeout = "UND_ERR_CONNECT_TIMEOUT";
const timeoutCodes = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", connectTimeout]);

/** Build the request function of one client. */
export function createTransport(config: TransportConfig): RequestFn {
  const { origin, apiBase, dispatcher, email, apiKey, logger, clock } = config;
  const polls = config.pollDispatcher;
  /** Polls on the account's own connection now (0 or 1). */
  let pollsOut = 0;
  /** When a wait for the rate budget was last logged: at most one line a minute says so. */
  let waitLoggedAt = Number.NEGATIVE_INFINITY;
  const { budget } = config;
  const clientPolicy = withRetry(defaultRetryPolicy, config.retry);
  const credentials = Buffer.from(`${email}:${apiKey}`).toString("base64");
  const authorization = `Basic ${credentials}`;
  // Server text is quoted in errors; make sure it can never carry the key out.
  const redact = (text: string): string => {
    let out = text.split(credentials).join("[redacted]");
    if (apiKey.length >= 8) out = out.split(apiKey).join("[redacted]");
    return out;
  };

  /** The undici options of one attempt: wire encoding, credentials, timeouts. */
  function requestOf(
    method: HttpMethod,
    path: string,
    params: Params | undefined,
    options: RequestOptions<unknown>,
    timeoutMs: number,
  ): Dispatcher.DispatchOptions {
    const encoded = encodeParams(params).toString();
    const isQuery = method === "GET";
    const headers: Record<string, string> = { "user-agent": config.userAgent, accept: "application/json" };
    if (options.auth !== false) headers.authorization = authorization;
    if (!isQuery) headers["content-type"] = "application/x-www-form-urlencoded";
    return {
      origin,
      path: `${options.site ? "" : apiBase}${path}${isQuery && encoded ? `?${encoded}` : ""}`,
      method,
      headers,
      body: isQuery ? null : encoded,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    };
  }

  function toNetworkError(err: unknown, endpoint: string, timeoutMs: number): unknown {
    const code = (err as { code?: unknown } | null)?.code;
    // Anything without a system or undici code is a bug, not the network: let it surface as is.
    if (typeof code !== "string" || code === "UND_ERR_INVALID_ARG") return err;
    if (err instanceof ResponseTooLarge)
      return new ResponseTooLargeError({ endpoint, maxBytes: err.maxBytes, cause: err });
    const timedOut = timeoutCodes.has(code);
    const message = err instanceof Error ? redact(err.message) : code;
    return new NetworkError({
      endpoint,
      origin,
      detail: timedOut ? `no response within ${timeoutMs / 1000} s (${code})` : message,
      timedOut,
      requestSent: !(notSentCodes.has(code) || code === connectTimeout),
      cause: err,
    });
  }

  function interpret(
    endpoint: string,
    status: number,
    headers: Record<string, string | string[] | undefined>,
    text: string,
    /** The budget the call's bucket keeps to, quoted by a 429's error. */
    /** undefined: the client's rate limit is off (`rateLimit: false`). */
    limits: Readonly<BudgetLimits> | undefined,
  ): Record<string, unknown> {
    const contentType = String(headers["content-type"] ?? "");
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const isObject = typeof body === "object" && body !== null && !Array.isArray(body);
    const fields = isObject ? (body as Record<string, unknown>) : {};
    const { result, msg, code, ...rest } = fields;
    // Built for errors only: a success (every poll's answer) needs no redacted message.
    const errorInit = () => ({
      status,
      endpoint,
      code: typeof code === "string" ? code : `HTTP_${status}`,
      msg: typeof msg === "string" ? redact(msg) : isObject ? "" : "(non-JSON body)",
      data: rest,
    });
    // Every 401 is an authentication failure, whatever the code and even from a proxy.
    if (status === 401) throw new AuthError({ ...errorInit(), email, origin });
    if (!isObject) {
      // Redacted whole before it is cut: a cut through the key would leave its start unredacted.
      const said = redact(text);
      throw new BadResponseError({
        endpoint,
        status,
        contentType,
        snippet: said.slice(0, 80) + (said.length > 80 ? "…" : ""),
      });
    }
    if (status === 429) {
      const limit = Number.parseFloat(String(headers["x-ratelimit-limit"] ?? ""));
      throw new RateLimitError({
        ...errorInit(),
        retryAfterMs: retryAfterMs(rest["retry-after"], headers),
        limits,
        serverLimit: Number.isFinite(limit) && limit >= 1 ? Math.floor(limit) : undefined,
      });
    }
    if (status >= 200 && status < 300 && result !== "error") {
      const data: Record<string, unknown> = rest; // a fresh object already
      if (code !== undefined) data.code = code;
      const ignored = data.ignored_parameters_unsupported;
      if (Array.isArray(ignored) && ignored.length > 0) {
        logger.warn(
          { endpoint, ignoredParameters: ignored },
          `${endpoint}: the server ignored parameters it does not support: ${ignored.join(", ")}. ` +
            `They may need a newer server.`,
        );
      }
      return data;
    }
    throw new ApiError(errorInit());
  }

  return async function request<T>(
    method: HttpMethod,
    path: string,
    params?: Params,
    options: RequestOptions<T> = {},
  ): Promise<T> {
    const endpoint = `${method} ${path}`;
    const idempotent = options.idempotent ?? (method === "GET" || method === "DELETE" || method === "PUT");
    const { signal } = options;
    const policy = options.retry === undefined ? clientPolicy : withRetry(clientPolicy, options.retry);
    const bucket = budget.of(method, path);
    const timeoutMs = options.timeoutMs ?? config.timeoutMs;
    // One suspended frame per call in flight (a daemon holds a parked poll per bot): the attempt
    // is awaited here, not in a helper of its own.
    for (let attempt = 1; ; attempt++) {
      const waitStart = clock.now();
      const wait = attempt === 1 && options.slot?.use() ? undefined : takeTold(bucket, signal, options.lane);
      if (wait) await wait;
      const started = clock.now();
      // Only a call the budget held waited: the clock may cross a millisecond during a take that holds nothing.
      if (wait) {
        const ms = started - waitStart;
        config.onRateLimitWait?.({ endpoint, ms });
        if (ms >= SLOW_BUDGET_WAIT_MS && started - waitLoggedAt >= 60_000) {
          waitLoggedAt = started;
          logger.info({ endpoint, waitedMs: ms }, "a call waited for the account's rate budget");
        }
      }
      let refusedHeaders: TextResponse["headers"] | undefined;
      try {
        let response: TextResponse;
        // A second poll at once (another queue of the same account) goes through the pool
        // rather than wait behind the parked one.
        const own = polls !== undefined && pollsOut === 0 && method === "GET" && path === "/events";
        if (own) pollsOut++;
        try {
          response = await requestText(
            own ? polls() : dispatcher,
            requestOf(method, path, params, options as RequestOptions<unknown>, timeoutMs),
            signal,
          );
        } catch (err) {
          config.onResponse?.({ endpoint, status: 0, ms: clock.now() - started });
          if (signal?.aborted) throw signal.reason;
          throw toNetworkError(err, endpoint, timeoutMs);
        } finally {
          if (own) pollsOut--;
        }
        const status = response.statusCode;
        config.onResponse?.({ endpoint, status, ms: clock.now() - started });
        // A 429's own retry-after is exact; its headers' whole-second reset is not.
        if (options.auth !== false && status !== 429) bucket.observe(response.headers);
        else if (options.auth !== false) refusedHeaders = response.headers;
        const data = interpret(
          endpoint,
          status,
          response.headers,
          response.text,
          bucket.enforced ? bucket.limits : undefined,
        );
        // Every poll passes here: the line is built only when debug is on.
        if (logger.isLevelEnabled?.("debug") !== false)
          logger.debug({ endpoint, attempt, ms: clock.now() - started }, `${endpoint} succeeded`);
        return options.schema ? validate(options.schema, data, endpoint) : (data as T);
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        // A 429 holds only this bucket: polls never make a send wait, nor the other way round.
        if (err instanceof RateLimitError) bucket.block(err.retryAfterMs, refusedHeaders);
        const code = (err as { code?: unknown } | null)?.code;
        logger.debug({ endpoint, attempt, code }, err instanceof Error ? err.message : `${endpoint} failed`);
        const decision = decideRetry(err, attempt, idempotent, policy);
        if (!decision.retry) throw err;
        // A poll failing for an outage is said by its queue consumer, once per outage: here at
        // debug. A 429 on it is said here (no outage: the server asks for a wait).
        const said = endpoint === "GET /events" && !(err instanceof RateLimitError) ? "debug" : "warn";
        logger[said](
          { endpoint, attempt, delayMs: decision.delayMs, reason: decision.reason },
          `${endpoint} failed (${decision.reason}); retrying in ${decision.delayMs} ms`,
        );
        const pause = sleep(clock, decision.delayMs, signal);
        if (err instanceof RateLimitError) {
          config.onRateLimitWait?.({ endpoint, ms: decision.delayMs });
          await budgetWait(pause, signal);
        } else await pause;
      }
    }
  };
}

function validate<T>(schema: z.ZodType<T>, data: unknown, endpoint: string): T {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.map(String).join(".") || "(body)"}: ${issue.message}`);
  throw new ResponseSchemaError({ endpoint, issues });
}
