/**
 * `ctx.report()`: report a message to the organization's moderators at most once, ever.
 *
 * Each report is claimed in the state store (`setIfAbsent`) before the server is called, so
 * neither concurrent handlers nor a restart can report a message twice. The claim is released
 * only when the server certainly did not act (429, 5xx, a connection that never carried the
 * request); a call that may have reached the server keeps its claim: at most once beats twice.
 *
 * An organization without a moderation request channel rejects every report (NOTES §11); the
 * first such answer logs one warning and later calls return `disabled` without a request.
 */
import type { Logger } from "pino";
import { ApiError, NetworkError, RateLimitError, UnsupportedFeatureError } from "../../api/errors.ts";
import type { MessagesApi } from "../../api/resources/messages.ts";
import { BothostError } from "../../errors/bothost-error.ts";
import type { StateStore } from "../../state/state-store.ts";
import { type Clock, realClock } from "../../time/clock.ts";
import { type ReportTypeInfo, validateReport } from "./report-description.ts";

/** What `ctx.report()` did. */
export type ReportResult = { reported: true } | { reported: false; reason: "duplicate" | "disabled" };

/**
 * Report a message once. `type` must be a key of the server's report types
 * (`ctx.server.reportTypes`); `"other"` needs a description; descriptions are cut to 1000 code points.
 */
export type ReportFn = (messageId: number, type: string, description?: string) => Promise<ReportResult>;

export interface MessageReporterOptions {
  messages: Pick<MessagesApi, "report">;
  /** Where claims live, e.g. `store.namespace(bot).namespace("reports")`. */
  store: StateStore;
  /** The bot's logger (the "disabled" warning is logged once per reporter). */
  log: Logger;
  clock?: Clock;
}

const DISABLED = /reporting is not enabled|moderation request channel must be specified/i;

/**
 * One per bot.
 *
 * @example
 * ```ts
 * const reporter = new MessageReporter({ messages: client.messages, store: store.namespace("mod").namespace("reports"), log });
 * await reporter.report(42, "spam", "same link in 5 channels", { reportTypes: server.reportTypes });
 * // { reported: true }, then { reported: false, reason: "duplicate" } for any later call about 42
 * ```
 */
export class MessageReporter {
  readonly #o: MessageReporterOptions;
  readonly #clock: Clock;
  #disabled = false;

  constructor(options: MessageReporterOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
  }

  /** True once the server said reporting is off (until the process restarts). */
  get disabled(): boolean {
    return this.#disabled;
  }

  async report(
    messageId: number,
    type: string,
    description: string | undefined,
    options: { reportTypes: readonly ReportTypeInfo[]; signal?: AbortSignal },
  ): Promise<ReportResult> {
    if (!Number.isInteger(messageId) || messageId <= 0) {
      throw new BothostError(
        "INVALID_ARGUMENT",
        `ctx.report(): messageId must be a positive integer message id, got ${String(messageId)}.`,
      );
    }
    const params = validateReport(type, description, options.reportTypes);
    if (this.#disabled) return { reported: false, reason: "disabled" };
    options.signal?.throwIfAborted(); // never claim a report that will not even be tried
    const key = `message:${messageId}`;
    const at = this.#clock.now();
    if (!(await this.#o.store.setIfAbsent(key, { type, at, state: "sending" }))) {
      return { reported: false, reason: "duplicate" };
    }
    try {
      await this.#o.messages.report(
        messageId,
        {
          report_type: params.report_type,
          ...(params.description !== undefined ? { description: params.description } : {}),
        },
        options.signal ? { signal: options.signal } : {},
      );
    } catch (err) {
      return this.#failed(key, err, { type, at });
    }
    await this.#o.store.set(key, { type, at, state: "reported" });
    return { reported: true };
  }

  async #failed(key: string, err: unknown, claim: { type: string; at: number }): Promise<ReportResult> {
    if (isDisabledError(err)) {
      await this.#o.store.delete(key);
      if (!this.#disabled) {
        this.#disabled = true;
        this.#o.log.warn(
          { reason: err instanceof UnsupportedFeatureError ? "unsupported" : "disabled" },
          err instanceof UnsupportedFeatureError
            ? "This server cannot report messages (it needs feature level 382); reports are skipped until the bot restarts."
            : "Message reporting is not enabled in this organization (no moderation request channel); " +
                "reports are skipped until the bot restarts. An administrator can choose a moderation " +
                "request channel in the organization settings.",
        );
      }
      return { reported: false, reason: "disabled" };
    }
    if (serverDidNotAct(err)) await this.#o.store.delete(key);
    else {
      const code = err instanceof BothostError ? err.code : "UNKNOWN";
      await this.#o.store.set(key, { ...claim, state: "failed", code });
    }
    throw err;
  }
}

function isDisabledError(err: unknown): boolean {
  if (err instanceof UnsupportedFeatureError) return true;
  return err instanceof ApiError && err.status === 400 && DISABLED.test(err.msg);
}

/** Failures after which the report certainly (or, for 5xx, almost certainly) was not made. */
function serverDidNotAct(err: unknown): boolean {
  if (err instanceof RateLimitError) return true;
  if (err instanceof ApiError) return err.status >= 500;
  if (err instanceof NetworkError) return !err.requestSent;
  // Anything else (an abort mid-call, a schema surprise) may have reached the server.
  return false;
}
