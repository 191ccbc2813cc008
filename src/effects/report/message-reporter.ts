/**
 * `ctx.report()`: report a message to the moderators at most once, ever. Each report is claimed
 * in the state store (`setIfAbsent`) before the server is called, so neither concurrent handlers
 * nor a restart can report twice; the claim is released only when the server certainly did not
 * act (429, its own 5xx, a connection that never carried the request): at most once beats twice.
 *
 * A claim names the event whose handler made it (its effect records' key). A later run of that
 * same event (a retry, a dead letter's replay, the catch-up after a crash) gets the first run's
 * `{ reported: true, earlier: true }` back, as its sends get their recorded results, so what it did after the
 * report (tell the sender) is done, once; any other event gets `duplicate`.
 *
 * An organization without a moderation request channel rejects every report (see
 * docs/internals/server-behaviour.md#message-reports): the first such answer logs one warning;
 * later calls return `disabled` without a request. Reports are checked here first, so a bad one
 * fails with a clear message instead of a bare 400.
 */
import type { Logger } from "pino";
import {
  ApiError,
  BadResponseError,
  NetworkError,
  RateLimitError,
  UnsupportedFeatureError,
} from "../../api/errors.ts";
import type { BudgetSlot } from "../../api/rate-budget.ts";
import type { MessagesApi } from "../../api/resources/messages.ts";
import type { ServerInfo } from "../../api/server-info.ts";
import { BothostError } from "../../errors/bothost-error.ts";
import type { StateStore } from "../../state/state-store.ts";
import type { Clock } from "../../time/clock.ts";
import { failpoint } from "../failpoints.ts";
import { truncateCodePoints } from "../limits/code-points.ts";

/** What `ctx.report()` did. */
export type ReportResult =
  /**
   * `earlier`: an earlier run of this event made the report; this call sent nothing.
   * `unconfirmed`: that run got no answer (a kill as it waited, a gateway's 502 or 504, a
   * timeout): the report counts as made, and may not have reached the moderators.
   */
  | { reported: true; earlier?: true; unconfirmed?: true }
  | { reported: false; reason: "duplicate" | "disabled" | "gone" };

/**
 * Report a message once. `type` must be a key of the server's report types
 * (`ctx.server.reportTypes`); `"other"` needs a description; descriptions are cut to 1000 code points.
 */
export type ReportFn = (messageId: number, type: string, description?: string) => Promise<ReportResult>;

/** The handler run calling `ctx.report`, for a run of an event that may have run before. */
export interface ReportingRun {
  /** The event (or job occurrence) the run handles: the same for each of its runs. */
  readonly event: string;
  /** The messages this run asked to report: its second call for one is a duplicate. */
  readonly asked: Set<number>;
}

/** What the store keeps per message. */
type Claim = {
  type: string;
  at: number;
  /** `lost`: its answer was lost (a gateway's 502 or 504, a timeout, the call cut by its run's stop): counted as made. */
  state: "sending" | "reported" | "lost" | "failed" | "gone";
  /** The event whose run made the claim (none from a context outside an event's run). */
  by?: string;
  code?: string;
};

export interface MessageReporterOptions {
  messages: Pick<MessagesApi, "report">;
  /** Where claims live, e.g. `store.namespace(bot).namespace("reports")`. */
  store: StateStore;
  log: Logger;
  clock: Clock;
  /** Makes the claim survive a kill -9 before the server is called (the daemon's store commit). */
  commit?: () => Promise<void>;
  /**
   * Resolves once the account's rate budget lets the report's call leave at once, with its start
   * reserved for it: a claim is taken only then, and no other call can take that start before the
   * report's, so a kill -9 while the call would wait for the budget leaves no claim.
   */
  budgetSlot?: (signal?: AbortSignal) => Promise<BudgetSlot>;
}

/**
 * The longest 429 a report waits for within the call, as the client waits for one by itself; a
 * longer one fails the call (its claim released), and the handler's run again waits.
 */
const RATE_LIMIT_WAIT_MS = 60_000;

const DISABLED = /reporting is not enabled|moderation request channel must be specified/i;

/** One per bot. */
export class MessageReporter {
  #disabled = false;
  /**
   * Claims whose write the state store failed (Redis out of reach, its replicas not confirming in
   * time) before the server was called: the claim may be stored all the same, and is this
   * process's to take again, or a report never made would count as made.
   */
  readonly #unsent = new Map<string, Claim>();

  constructor(private readonly o: MessageReporterOptions) {}

  async report(
    messageId: number,
    type: string,
    description: string | undefined,
    options: { reportTypes: ServerInfo["reportTypes"]; signal?: AbortSignal; run?: ReportingRun },
  ): Promise<ReportResult> {
    if (!Number.isInteger(messageId) || messageId <= 0) {
      throw Object.assign(
        new BothostError(
          "INVALID_ARGUMENT",
          `ctx.report(): messageId must be a positive integer message id, got ${String(messageId)}.`,
        ),
        { field: "messageId" },
      );
    }
    const params = validateReport({ type, description }, options.reportTypes);
    if (this.#disabled) return { reported: false, reason: "disabled" };
    options.signal?.throwIfAborted(); // never claim a report that will not even be tried
    const key = `message:${messageId}`;
    const run = options.run;
    // Marked before any await: of one run's calls for a message, only the first may be its re-run's.
    const first = run !== undefined && !run.asked.has(messageId);
    run?.asked.add(messageId);
    const rerunOf = first ? run.event : undefined;
    for (;;) {
      const found = (await this.o.store.get(key)) as Claim | undefined;
      // A claim this process stored, or may have, without calling the server: taken again (once).
      const unsent = this.#unsent.get(key);
      const mine = found !== undefined && unsent?.at === found.at && unsent.by === found.by;
      if (mine) this.#unsent.delete(key);
      // Claimed already (a run again, a duplicate): answered with no start of the budget held for it.
      else if (found !== undefined) return this.#claimed(key, rerunOf);
      // A claim kept through a kill counts as made: none is taken while the call would only wait,
      // and the call's start is reserved with it, so no other call takes it in between.
      const slot = await this.o.budgetSlot?.(options.signal);
      const claim: Claim = mine
        ? found
        : { type, at: this.o.clock.now(), state: "sending", ...(run ? { by: run.event } : {}) };
      try {
        try {
          if (!mine && !(await this.o.store.setIfAbsent(key, claim))) return this.#claimed(key, rerunOf);
          // The claim must outlive a kill -9 before the server can act on the report.
          await this.o.commit?.();
        } catch (err) {
          this.#unsent.set(key, claim);
          throw err;
        }
        // With a budget to wait on, the server's 429 is waited for here, unclaimed, not in the call.
        const call = {
          ...(options.signal ? { signal: options.signal } : {}),
          ...(slot ? { slot } : {}),
          ...(this.o.budgetSlot ? { retry: { maxRateLimitWaitMs: 0 } } : {}),
        };
        try {
          await this.o.messages.report(messageId, params, call);
          failpoint("report-made");
        } catch (err) {
          if (!this.o.budgetSlot || !(err instanceof RateLimitError) || err.retryAfterMs > RATE_LIMIT_WAIT_MS)
            return this.#failed(key, err, claim, options.signal?.aborted === true);
          // Not made: the claim goes (for good, before the wait), and the budget holds the next try.
          await this.o.store.delete(key);
          await this.o.commit?.();
          this.o.log.warn(
            { messageId, waitMs: err.retryAfterMs },
            "a report waits for the server's rate limit (429); its message is not claimed meanwhile",
          );
          continue;
        }
      } finally {
        slot?.release(); // unused when no call was made (claimed meanwhile, the store failing)
      }
      await this.o.store.set(key, { ...claim, state: "reported" });
      // Kept through a kill from here: a run again is told the report was confirmed.
      await this.o.commit?.();
      return { reported: true };
    }
  }

  /**
   * The answer to a report of a message claimed already: `gone` when the server said the message
   * is no more; `reported` to a run again of `event` whose earlier run claimed it and got no error
   * but a lost answer (made, or its answer lost with the process or on the way, which counts as
   * made: `unconfirmed`); else `duplicate`.
   */
  async #claimed(key: string, event: string | undefined): Promise<ReportResult> {
    const claim = (await this.o.store.get(key)) as Partial<Claim> | undefined;
    if (claim?.state === "gone") return { reported: false, reason: "gone" };
    if (event !== undefined && claim?.by === event && claim.state !== "failed")
      return { reported: true, earlier: true, ...(claim.state !== "reported" && { unconfirmed: true }) };
    return { reported: false, reason: "duplicate" };
  }

  /** `aborted`: the run's signal cut the call (its stop, its `handler_timeout`), maybe once it was sent. */
  async #failed(key: string, err: unknown, claim: Claim, aborted: boolean): Promise<ReportResult> {
    if (isDisabledError(err)) {
      await this.o.store.delete(key);
      if (!this.#disabled) {
        this.#disabled = true;
        this.o.log.warn(
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
    if (isGoneError(err)) {
      // Deleted (by a moderator, say) or out of the bot's reach before the report: nothing to do.
      await this.o.store.set(key, { ...claim, state: "gone" });
      return { reported: false, reason: "gone" };
    }
    if (!aborted && serverDidNotAct(err)) await this.o.store.delete(key);
    else if (aborted || answerLost(err)) await this.o.store.set(key, { ...claim, state: "lost" });
    else {
      const code = err instanceof BothostError ? err.code : "UNKNOWN";
      await this.o.store.set(key, { ...claim, state: "failed", code });
    }
    throw err;
  }
}

function isDisabledError(err: unknown): boolean {
  if (err instanceof UnsupportedFeatureError) return true;
  return err instanceof ApiError && err.status === 400 && DISABLED.test(err.msg);
}

/** The server's answer for a message that does not exist, or that the bot may not read. */
function isGoneError(err: unknown): boolean {
  return err instanceof ApiError && err.status === 400 && /^Invalid message\(s\)/.test(err.msg);
}

/**
 * A gateway's 502 or 504: the proxy lost the server's answer, maybe after the server made the
 * report (a report cannot be read back, and the server posts a second one for a second request).
 */
const GATEWAY_LOST_ANSWER = new Set([502, 504]);

/** Failures after which the server may well have made the report: counted as made. */
function answerLost(err: unknown): boolean {
  if (err instanceof ApiError || err instanceof BadResponseError) return GATEWAY_LOST_ANSWER.has(err.status);
  return err instanceof NetworkError && err.requestSent;
}

/** Failures after which the report certainly (or, for the server's 5xx, almost certainly) was not made. */
function serverDidNotAct(err: unknown): boolean {
  if (err instanceof RateLimitError) return true;
  // A proxy's own page (not JSON) is judged by its status alike: its 503 is the server unreachable.
  if (err instanceof ApiError || err instanceof BadResponseError)
    return err.status >= 500 && !GATEWAY_LOST_ANSWER.has(err.status);
  if (err instanceof NetworkError) return !err.requestSent;
  // Anything else (a schema surprise) may have reached the server.
  return false;
}

/** Clients limit report descriptions to this many Unicode code points. */
export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;

/** A report the server would refuse: an unknown type, or "other" without a description. */
export class ReportError extends BothostError<"REPORT_INVALID"> {
  override readonly name = "ReportError";

  constructor(
    readonly field: "type" | "description",
    message: string,
  ) {
    super("REPORT_INVALID", message);
  }
}

/**
 * Checks a report against the server's report types (`ServerInfo.reportTypes`) and returns the
 * parameters to send, the description cut to 1000 code points. Throws {@link ReportError}
 * (`REPORT_INVALID`).
 */
export function validateReport(
  input: { type: string; description?: string | undefined },
  serverReportTypes: ServerInfo["reportTypes"],
): { report_type: string; description?: string } {
  const keys = serverReportTypes.map((t) => t.key);
  if (!keys.includes(input.type)) {
    throw new ReportError(
      "type",
      `Report type "${input.type}" is not offered by this server; use one of: ${keys.join(", ")}.`,
    );
  }
  const description = input.description ?? "";
  if (input.type === "other" && description.trim() === "") {
    throw new ReportError(
      "description",
      'Report type "other" needs a description of what is wrong; pass a non-empty description.',
    );
  }
  if (description === "") return { report_type: input.type };
  return {
    report_type: input.type,
    description: truncateCodePoints(description, MAX_REPORT_DESCRIPTION_LENGTH).text,
  };
}
