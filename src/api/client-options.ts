/**
 * The options of `createClient`, and their names: a misspelt option is refused rather than
 * dropped unseen.
 */
import type { Dispatcher } from "undici";
import { suggest } from "../errors/did-you-mean.ts";
import type { Clock } from "../time/clock.ts";
import type { CapturedCall } from "./capture.ts";
import { ClientConfigError } from "./errors.ts";
import type { Logger } from "./logger.ts";
import type { RateBudget } from "./rate-budget.ts";
import type { RetryOptions } from "./retry-policy.ts";

/** Options shared by both ways of naming the account. */
export interface ClientCommonOptions {
  /**
   * Default `bothost/<version>`. Do not pose as a UI client (see
   * docs/internals/server-behaviour.md#client-names).
   */
  userAgent?: string;
  /** Send through this undici dispatcher instead of the pool shared per server origin. */
  dispatcher?: Dispatcher;
  /** pino or anything with debug/info/warn/error; default silent. */
  logger?: Logger;
  /**
   * The account's budgets as the server keeps them, one for the event-queue calls (GET and DELETE
   * /events) and one for every other call, each per sliding minute and hour: default 200 and
   * 2,000, the server's defaults. A limit the server reports in `X-RateLimit-*` headers that is
   * higher than `perHour` raises it, and once those headers say no call is left, calls wait for
   * their reset. `false`: calls are counted (`client.budget`) but never held.
   */
  rateLimit?: { perMinute?: number; perHour?: number } | false;
  /**
   * The account's budgets, shared with other clients of the same account (the daemon keeps one per
   * account, across reloads): given, `rateLimit` is not read.
   */
  budget?: RateBudget;
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

/** Every option's name; `satisfies` keeps it the type's. */
const OPTION_NAMES = Object.keys({
  url: 0,
  email: 0,
  apiKey: 0,
  zuliprc: 0,
  userAgent: 0,
  dispatcher: 0,
  logger: 0,
  rateLimit: 0,
  budget: 0,
  retry: 0,
  featureLevel: 0,
  isBot: 0,
  timeoutMs: 0,
  clock: 0,
  onResponse: 0,
  onRateLimitWait: 0,
  capture: 0,
} satisfies Record<keyof ClientCommonOptions | "url" | "email" | "apiKey" | "zuliprc", 0>);

/** A misspelt option (`timeoutMS`) would be dropped unseen: it is refused, with the name meant. */
export function checkOptionNames(options: object): void {
  for (const name of Object.keys(options)) {
    if (OPTION_NAMES.includes(name)) continue;
    const meant = suggest(name, OPTION_NAMES);
    throw new ClientConfigError(
      `createClient: \`${name}\` is not an option${meant ? `: did you mean \`${meant}\`?` : "."} The options are ${OPTION_NAMES.join(", ")}.`,
    );
  }
}
