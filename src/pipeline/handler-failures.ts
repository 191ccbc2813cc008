/**
 * What happens to an event whose handler threw (`bot.catch` only observes, see composer.ts): it runs again
 * after a pause (doubling up to a cap), and when the last attempt fails too, or the handler threw
 * {@link NoRetry}, the event is kept as a dead letter for an operator to read and replay; a `NoRetry` with
 * `deadLetter: false` ends it there, kept nowhere, and so does a prompt that got no answer in time (a normal
 * end of a conversation: running the handler again would only ask the person again). The dispatcher holds
 * the event's conversation until this settles, so the conversation's later events wait (at most the sum of
 * the pauses and runs) and keep their order, while other conversations go on. A stop in a pause (or an
 * attempt) waits for no more: the event is kept as a dead letter marked for replay, no failure of its own.
 *
 * A failure that is the state store's outage (see {@link outageOf}) is not the handler's: a run whose last
 * attempt failed on it is kept nowhere (the outage would refuse the dead letter too) but waits for the
 * store, run again until it gets through (store-waits.ts): an event in its conversation's order (an outgoing
 * webhook's delivery too: its caller was answered by its deadline), a cron job's occurrence with its job
 * counted as running (its firings meanwhile are skipped). A message or a dialog's run the stop cuts off
 * meanwhile is left unmarked, and the next start runs it again (its catch-up, its log); a delivery or an
 * occurrence is kept as a dead letter marked for replay, as any run the stop cuts off.
 */
import type { Logger } from "pino";
import { sleep, timeoutSignal } from "../api/sleep.ts";
import { type EffectRecord, type EffectRecords, SERVER_CLOCK_SLACK_S } from "../effects/effect-records.ts";
import { NoRetry } from "../errors/no-retry.ts";
import type { DeadLetter, DeadLetterSource, DeadLetters } from "../state/dead-letters.ts";
import { isStoreOutage, type StateErrorCode } from "../state/state-error.ts";
import type { JsonValue } from "../state/state-store.ts";
import { type Clock, monotonicMs } from "../time/clock.ts";
import type { SendEffects } from "./context-types.ts";
import { DialogEnded, LogMoved } from "./dialogs/dialog-log.ts";
import { promptUnanswered } from "./dialogs/prompt-error.ts";
import type { DispatchMetrics, FailureMetrics, JobOccurrence, RunJob } from "./incoming.ts";
import { handlerTimedOut, RouterError } from "./router-error.ts";
import type { StoreHealth } from "./store-health.ts";
import { StoreWaits } from "./store-waits.ts";

/** The log line of a run that failed on a state store outage (see {@link outageOf}). */
export const STORE_OUTAGE_LINE = "the run failed on a state store outage, not in the handler";
/** The log line of an event whose every attempt failed, the last on the store's outage (see `settle`). */
export const STORE_WAIT_LINE =
  "the state store's outage outlasted every attempt: the event waits for the store, its conversation held";
/** {@link STORE_WAIT_LINE} for a cron job's occurrence. */
export const STORE_WAIT_JOB_LINE =
  "the state store's outage outlasted every attempt: the cron job's occurrence waits for the store, the job's firings meanwhile skipped";

/**
 * What to log of `err` when it is a state store outage (a Redis outage, a lost lease: see
 * `isStoreOutage`), which the handler only passed on: its code and message, without the stack,
 * which would point at the bot's code. Undefined for any other failure, the handler's own.
 */
export function outageOf(err: unknown): { code: StateErrorCode; reason: string } | undefined {
  return isStoreOutage(err) ? { code: err.code, reason: err.message } : undefined;
}

/**
 * How a failing handler is run again (config `retries`): after `backoffMs`, doubling up to
 * `maxBackoffMs`, until it has run `attempts` times.
 */
export interface RetryPolicy {
  /** Runs in all, the first included (1: never retried). */
  attempts: number;
  backoffMs: number;
  maxBackoffMs: number;
}

/** The pause before run `n + 1` after run `n` failed (n ≥ 1). */
export function retryDelay(policy: RetryPolicy, n: number): number {
  return Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** (n - 1));
}

export interface HandlerFailuresOptions {
  retries: RetryPolicy;
  /** Where events whose every attempt failed are kept; without it they are only logged. */
  letters: DeadLetters | undefined;
  /** Each later attempt is aborted after this long. */
  handlerTimeoutMs: number;
  log: Logger;
  clock: Clock;
  metrics: FailureMetrics | undefined;
  /** Makes a dead letter durable before its message is marked handled. */
  commit(): Promise<void>;
  /** Told when a run waiting for the store gets through (see store-health.ts). */
  health?: StoreHealth | undefined;
}

/** The failed event or job occurrence. */
export interface FailedRun {
  event: { type: string };
  source: DeadLetterSource;
  /** The dead letter this run replays, if it is one; once handled, `recordHandled` before its removal. */
  letter?: DeadLetter;
  recordHandled?(): Promise<void>;
  /** Run the handler again, with a fresh context on `signal` (the attempt's timeout, or stop). */
  again(signal: AbortSignal): unknown;
  /** The effects the last run made (or found made), its `ctx.external` results too, for the dead letter to carry. */
  effects(): JsonValue[];
  /** The dialog the run replays, for the dead letter to carry. */
  dialog?: JsonValue;
  /** An event without a message id: its records' key and read-back bound, for the dead letter to carry. */
  records?: DeadLetter["records"];
  /** The failure is final (not retried again, nor replayed at the next start): end what the run left open. */
  gaveUp?(signal: AbortSignal): Promise<void>;
}

export class HandlerFailures {
  readonly #o: HandlerFailuresOptions;
  readonly #waits: StoreWaits;
  #stopping = new AbortController();
  // Known without reading the signal: one is made on first read (most of a KB), needed only on a failure.
  #stopped = false;

  constructor(options: HandlerFailuresOptions) {
    this.#o = options;
    this.#waits = new StoreWaits(options.clock, options.health);
  }

  /** Interrupt every pause now (the bot stops): their events are kept, marked for replay. */
  stop(): void {
    this.#stopped = true;
    this.#stopping.abort(new Error("bot stopping"));
  }

  /** From {@link stop} to {@link restart}: a run failing meanwhile was cut by the stop, no failure. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Take new failures again after {@link stop} (the bot was started again). */
  restart(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#stopping = new AbortController();
  }

  /**
   * The first run of `run` threw `error`. Resolves once the event is done with: handled by a later
   * attempt (true), kept as a dead letter (false) or, the stop cutting its retries, marked for replay
   * (`"replays"`: no failure); `"resumes"` for a dialog's run the stop cut, a message's first run the
   * stop's deadline aborted, a message or dialog's run the store's outage failed as the bot stopped:
   * nothing kept or marked, the next start runs it from the dialog's log or the catch-up. Never rejects.
   */
  async settle(run: FailedRun, error: unknown): Promise<boolean | "resumes" | "replays"> {
    const o = this.#o;
    if (promptUnanswered(error)) return this.#ended(run, true);
    const clock = o.clock;
    const stopping = this.#stopping.signal;
    const firstFailedAt = clock.now();
    const policy = o.retries;
    let last = error;
    let attempts = 1;
    let waited = false;
    /** Counted among the events the outage had run again (store-health.ts). */
    let retried = false;
    while (!(last instanceof NoRetry) && !stopping.aborted) {
      const outage = outageOf(last);
      // Past the last attempt, only a run failed on the store's outage goes on: it waits for it.
      const waits = attempts >= policy.attempts;
      if (waits && !outage) break;
      let ran = false;
      const attempt = async () => {
        ran = true;
        o.metrics?.handlerRetried(run.event.type);
        attempts++;
        const timeout = timeoutSignal(clock, o.handlerTimeoutMs, () => handlerTimedOut(o.handlerTimeoutMs));
        try {
          await run.again(AbortSignal.any([stopping, timeout.signal]));
        } finally {
          timeout.clear();
        }
      };
      try {
        // Once the store's outage is said, its lines for each event at debug (store-health.ts).
        if (waits) {
          const level = !waited && o.health?.quiet("waited", last) ? "debug" : "warn";
          if (!waited && run.event.type === "cron_job") {
            const { job, scheduledFor } = run.event as JobOccurrence;
            o.log[level]({ ...outage, attempts, job, scheduledFor }, STORE_WAIT_JOB_LINE);
          } else if (!waited) o.log[level]({ ...outage, attempts }, STORE_WAIT_LINE);
          waited = true;
          await this.#waits.run(stopping, attempt);
        } else {
          const delay = retryDelay(policy, attempts);
          const again = { attempt: attempts, of: policy.attempts, retryInMs: delay };
          if (outage) {
            const level = o.health?.quiet("retried", last, retried) ? "debug" : "warn";
            retried ||= o.health?.failing === true && outage.code !== "STATE_FENCED";
            o.log[level]({ ...outage, ...again }, `${STORE_OUTAGE_LINE}; running it again after a pause`);
          } else o.log.warn({ err: last, ...again }, "handler failed; running it again after a pause");
          await sleep(clock, delay, stopping);
          await attempt();
        }
        o.log.info({ attempts }, "handler succeeded on a later attempt");
        return await this.#ended(run);
      } catch (err) {
        if (!ran) break; // stopping during the pause: see below
        // A prompt unanswered, the dialog ended during the pause (an operator's end), or run by
        // another instance (its question kept first: see `ranElsewhere`): done with.
        if (promptUnanswered(err) || err instanceof DialogEnded || err instanceof LogMoved)
          return this.#ended(run, promptUnanswered(err) || err instanceof DialogEnded);
        if (err !== stopping.reason) last = err; // the stop's abort: the handler's own error is kept
      }
    }
    if (stopping.aborted && run.dialog !== undefined && !run.letter && !(last instanceof NoRetry)) {
      // Kept as a letter, the dialog would have to be ended (its log refuses what a replay of
      // the letter appends), and answers sent meanwhile would reach no dialog.
      o.log.info(
        { err: last, attempts },
        "a dialog's run was cut off by the stop: it runs again at the next start",
      );
      return "resumes";
    }
    if (stopping.aborted && (waited || outageOf(last)) && isMessage(run)) {
      // Kept nowhere (the outage would refuse the letter): as after a crash, the next start runs it.
      o.log.info(
        { attempts },
        "a run waiting for the state store was cut off by the stop: it runs again at the next start",
      );
      return "resumes";
    }
    if (attempts === 1 && cutOffMessage(run, last)) {
      // Left unmarked, as a crash leaves it: the next start's catch-up runs it again, once. A
      // letter as well could run it twice, should the stop close the store before its mark.
      o.log.info({ err: last }, "a message's run was cut off by the stop: it runs again at the next start");
      return "resumes";
    }
    // Cut by the stop, it is replayed at the next start: only a failure that stays one is final.
    if (!stopping.aborted) await this.#gaveUp(run);
    const cut = stopping.aborted && !(last instanceof NoRetry);
    await this.#keep(run, last, attempts, firstFailedAt, clock.now(), cut);
    return cut ? "replays" : false;
  }

  /** Let the run end what it left open (its progresses), within a handler's time, unless the bot stops. */
  async #gaveUp(run: FailedRun): Promise<void> {
    if (!run.gaveUp) return;
    const o = this.#o;
    const timeout = timeoutSignal(o.clock, o.handlerTimeoutMs, () => handlerTimedOut(o.handlerTimeoutMs));
    try {
      await run.gaveUp(AbortSignal.any([this.#stopping.signal, timeout.signal]));
    } catch (err) {
      o.log.warn({ err }, "could not end what the failed handler left open");
    } finally {
      timeout.clear();
    }
  }

  /**
   * The run ended without a failure to keep (a prompt went unanswered, its dialog ended): done with.
   * `over`: so its dialog did, and what it left open (its progresses) ends as failed, as after a final failure.
   */
  async #ended(run: FailedRun, over = false): Promise<true> {
    if (over && !this.#stopping.signal.aborted) await this.#gaveUp(run);
    if (!run.letter) return true;
    await run.recordHandled?.();
    await this.#o.letters?.remove(run.letter.id).catch((err: unknown) => {
      this.#o.log.error({ err, deadLetter: run.letter?.id }, "could not remove the replayed dead letter");
    });
    return true;
  }

  async #keep(
    run: FailedRun,
    error: unknown,
    attempts: number,
    first: number,
    last: number,
    interrupted: boolean,
  ): Promise<void> {
    const o = this.#o;
    if (!interrupted && !(error instanceof NoRetry && !error.deadLetter))
      o.metrics?.deadLettered(run.event.type);
    const why =
      error instanceof NoRetry
        ? "it threw NoRetry"
        : interrupted
          ? "the bot stopped"
          : "every attempt failed";
    try {
      if (error instanceof NoRetry && !error.deadLetter) {
        // The bot handled the failure itself: nothing kept; a replayed letter done with, as handled.
        o.log.warn(
          { err: error, attempts },
          "handler failed and threw NoRetry with deadLetter: false: not kept",
        );
        await this.#ended(run);
        return;
      }
      if (!o.letters) {
        // Without a dead-letter store the first failure's log line is all there is.
        if (attempts > 1)
          o.log.error({ err: error, attempts }, `handler failed (${why}); no dead-letter store keeps it`);
        return;
      }
      // Cut short by the stop (a replayed letter too): kept marked in the same write, replayed at the next start.
      const retryRequestedAt = interrupted ? new Date(last) : undefined;
      const failed = { error, attempts, lastFailedAt: new Date(last).toISOString(), effects: run.effects() };
      const again = run.letter;
      if (again) await o.letters.failedAgain(again.id, { ...failed, retryRequestedAt });
      const { source, dialog, records } = run;
      const event = run.event as unknown as JsonValue;
      const firstFailedAt = new Date(first).toISOString();
      const letter =
        again ??
        (await o.letters.add(
          { ...failed, source, event, firstFailedAt, ...(dialog && { dialog }), ...(records && { records }) },
          { retryRequestedAt },
        ));
      // The failure has its line already (`handler failed`): the stop cutting its retries is no error.
      if (interrupted) o.log.info({ attempts, deadLetter: letter.id }, CUT_BY_STOP);
      else
        o.log.error(
          { err: error, attempts, deadLetter: letter.id },
          again
            ? `replayed dead letter failed again (${why})`
            : `handler failed (${why}): kept as dead letter ${letter.id}`,
        );
      await o.commit();
    } catch (err) {
      o.log.error({ err, original: error }, "could not keep the failed event as a dead letter");
    }
  }
}

/**
 * Stages 4–5 for a cron job's occurrence: each attempt's sends are recorded under it, `keptMs` if
 * given (a re-run repeats none, and reads back the one in flight among the bot's messages since the
 * firing, less the server's clock's slack); a failed attempt runs again after a pause; once every
 * attempt failed, it is a dead letter (source "job"), or, failed on the store's outage, waits for it.
 */
export function jobRunner(
  o: Pick<HandlerFailuresOptions, "letters" | "log" | "health"> & {
    effects: EffectRecords | undefined;
    metrics: Pick<DispatchMetrics, "storeOutage"> | undefined;
  },
  failures: HandlerFailures,
): RunJob {
  return async (occurrence, attempt, signal, letter, resumed = false, marked, keptMs) => {
    const key = `j:${occurrence.job}@${occurrence.scheduledFor}`;
    const carried = (letter?.effects ?? []) as unknown as EffectRecord[];
    const since = Math.floor(Date.parse(occurrence.firedAt) / 1000) - SERVER_CLOCK_SLACK_S;
    // No effect (a `ctx.external` call above all) before the next start would see the run was
    // under way: else a crash in it is taken for an occurrence missed while down.
    let unmarked = marked;
    void marked?.then(() => {
      unmarked = undefined;
    });
    const before = marked && (() => unmarked);
    const records = keptMs === undefined ? o.effects : o.effects?.keptFor(keptMs);
    const effectsOf = (rerun: boolean): SendEffects | undefined =>
      records && { run: records.run(key, rerun, carried, false, before), after: undefined, since };
    const job = { job: occurrence.job, scheduledFor: occurrence.scheduledFor };
    const run = async (s: AbortSignal, effects: SendEffects | undefined) => {
      const started = monotonicMs();
      try {
        await attempt(s, effects, key);
      } catch (err) {
        const outage = outageOf(err);
        if (outage) {
          o.metrics?.storeOutage(occurrence.type, (monotonicMs() - started) / 1000);
          // Once the outage is said (store-health.ts), each of its tries only at debug.
          o.log[o.health?.repeats(err) ? "debug" : "warn"]({ ...outage, ...job }, STORE_OUTAGE_LINE);
        }
        throw err;
      }
    };
    let last = effectsOf(letter !== undefined || resumed);
    try {
      await run(signal, last);
      if (letter) await o.letters?.remove(letter.id);
      return true;
    } catch (err) {
      if (!outageOf(err)) o.log.error({ err, ...job }, "cron job failed");
      // A job's run has no dialog: its outcome is handled (true) or kept (false).
      const outcome = await failures.settle(
        {
          event: occurrence,
          source: "job",
          ...(letter ? { letter } : {}),
          again: (s) => {
            last = effectsOf(true);
            return run(s, last);
          },
          effects: () => (last?.run.kept ?? []) as unknown as JsonValue[],
        },
        err,
      );
      return outcome === true;
    }
  };
}

const CUT_BY_STOP = "handler run cut by the bot's stop: kept for replay, it runs again at the next start";
/** A live or caught-up message's first run, aborted by the stop's deadline (the next start catches it up). */
function cutOffMessage(run: FailedRun, err: unknown): boolean {
  return isMessage(run) && err instanceof RouterError && err.code === "ROUTER_ABORTED";
}

/** A live or caught-up message in the ledger, or a dialog's run (not a letter's) in its log. */
function isMessage(run: FailedRun): boolean {
  const live = run.dialog ? !run.letter : run.source === "queue" || run.source === "catch-up";
  return live && run.event.type === "message";
}
