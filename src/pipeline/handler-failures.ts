/**
 * What happens to an event whose handler threw (`bot.catch` only observes, see composer.ts): it runs again
 * after a pause (doubling up to a cap), and when the last attempt fails too, or the handler threw
 * `NoRetry`, or its request was refused as made (a 400 such as `STREAM_DOES_NOT_EXIST`, a snippet over
 * its size: handler-failures-refusals.ts), the event is kept as a dead letter for an operator to read
 * and replay; a `NoRetry` with `deadLetter: false` ends it there, kept nowhere, and so does a prompt that
 * got no answer in time (a normal end of a conversation: running the handler again would only ask the
 * person again). The dispatcher holds the event's conversation until this settles, so the conversation's
 * later events wait (at most the sum of the pauses and runs) and keep their order, while other
 * conversations go on. A stop in a pause (or an
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
import type { Logger } from "../api/logger.ts";
import { sleep } from "../api/sleep.ts";
import { failpoint } from "../effects/failpoints.ts";
import type { JsonValue } from "../state/state-store.ts";
import { namedRun, withinAttemptTime } from "./attempt-timeout.ts";
import { DialogEnded, LogMoved } from "./dialogs/dialog-log.ts";
import { promptUnanswered } from "./dialogs/prompt-error.ts";
import { AttemptsRanOut, FailedAttempts } from "./failed-attempts.ts";
import { FailureEnds, inWords } from "./handler-failures-ends.ts";
import {
  outageOf,
  STORE_OUTAGE_LINE,
  STORE_WAIT_JOB_LINE,
  STORE_WAIT_LINE,
} from "./handler-failures-outage.ts";
import { isFinal } from "./handler-failures-refusals.ts";
import {
  type FailedRun,
  type HandlerFailuresOptions,
  retryDelay,
  type SettleOutcome,
} from "./handler-failures-types.ts";
import { type Incoming, type JobOccurrence, sourceOf } from "./incoming.ts";
import { LEFT_ENDED_LINE } from "./left-runs.ts";
import { RouterError } from "./router-error.ts";
import { againAfter, cutLog, cutOffMessage, fenced, isMessage, LEASE_STOP } from "./stop-cut.ts";
import { StoreWaits } from "./store-waits.ts";

export { jobRunner } from "./handler-failures-jobs.ts";

/** A message's run or a dialog's, as its attempts are counted. */
function countedAs(incoming: Incoming): Pick<FailedRun, "event" | "source" | "dialog" | "letter"> {
  const { event, letter, dialog } = incoming;
  return { event, letter, dialog: dialog as unknown as JsonValue, source: sourceOf(incoming) };
}

/** Said at a start that follows no clean stop of the bot (failed-attempts.ts). */
export const RECOVERING_LINE =
  "the bot's last run did not stop cleanly (a crash, a kill, or a stop for its lease lost while the state store was out of reach): the runs taken up again are counted as they begin, so that one that brings the process down each time is kept as a dead letter once its attempts ran out";
export {
  outageOf,
  STORE_OUTAGE_LINE,
  STORE_WAIT_JOB_LINE,
  STORE_WAIT_LINE,
} from "./handler-failures-outage.ts";
export { isFinal, type Refusal, refusalOf } from "./handler-failures-refusals.ts";
export {
  type FailedRun,
  type HandlerFailuresOptions,
  type RetryPolicy,
  retryDelay,
  type SettleOutcome,
} from "./handler-failures-types.ts";

export class HandlerFailures {
  readonly #o: HandlerFailuresOptions;
  readonly #waits: StoreWaits;
  readonly #ends: FailureEnds;
  readonly #tally: FailedAttempts;
  #stopping = new AbortController();
  // Known without reading the signal: one is made on first read (most of a KB), needed only on a failure.
  #stopped = false;
  /** The level of each event's warn line of the bot's stop: debug for a lease's (see stop-cut.ts). */
  cutLevel: "warn" | "debug" = "warn";
  /** The bot stops for its lease (lost or handed over): another instance runs it from now on. */
  #forLease = false;
  /** Where a run the stop cuts off runs again (`againAfter`). */
  againWhere = againAfter(undefined);

  constructor(options: HandlerFailuresOptions) {
    this.#o = options;
    this.#waits = new StoreWaits(options.clock, options.health);
    const hold = { clock: options.clock, ms: options.handlerTimeoutMs };
    this.#tally = new FailedAttempts(options.attempts, options.commit, hold);
    this.#ends = new FailureEnds(
      options,
      () => this.#stopping.signal,
      () => ({ level: this.cutLevel, where: this.againWhere }),
    );
  }

  /**
   * Interrupt every pause now (the bot stops): their events are kept, marked for replay; for its
   * lease (`LEASE_STOP`), a message is left to the catch-up of the instance that runs the bot now.
   */
  stop(stop?: string): void {
    this.#forLease = stop === LEASE_STOP;
    this.againWhere = againAfter(stop);
    [this.#stopped, this.cutLevel] = [true, this.#forLease ? "debug" : "warn"];
    this.#stopping.abort(new Error("bot stopping"));
    this.#tally.leave();
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

  /** At a start: read the attempts counted before it (failed-attempts.ts); true when it follows a crash. */
  async loadCounts(): Promise<boolean> {
    const recovering = await this.#tally.load(this.#o.retries.attempts);
    if (recovering) this.#o.log.info(RECOVERING_LINE);
    return recovering;
  }

  /** The bot stopped cleanly: its next start is no recovery from a crash (failed-attempts.ts). */
  stoppedCleanly(): Promise<void> {
    return this.#tally.stopped();
  }

  /** After a crash, a run taken up again has its first attempt counted before it begins (failed-attempts.ts). */
  begins(
    run: Pick<FailedRun, "event" | "source" | "dialog" | "letter">,
    again: boolean,
    task?: { readonly signal: AbortSignal },
  ): Promise<void> | undefined {
    return this.#tally.begins(run, again, task);
  }

  /** `run`'s attempt ended without failing: the count {@link begins} made goes. */
  ran(run: Pick<FailedRun, "event" | "source" | "dialog" | "letter">): void {
    this.#tally.ran(run);
  }

  /** The start followed a crash (see {@link begins}). */
  get recovering(): boolean {
    return this.#tally.recovering;
  }

  /**
   * {@link begins} for a message's run or a dialog's: counted when the start took it up again (a
   * message caught up, a dialog read at start or its answer caught up, a dead letter replayed),
   * not for live traffic.
   */
  beginsAgain(incoming: Incoming, task: { readonly signal: AbortSignal }): Promise<void> | undefined {
    const run = countedAs(incoming);
    return this.begins(run, run.source === "catch-up" || run.source === "replay", task);
  }

  /** {@link ran} for a message's run or a dialog's (nothing to do, and no allocation, unless one was counted). */
  ranAgain(incoming: Incoming): void {
    if (this.#tally.counting) this.ran(countedAs(incoming));
  }

  /** Some counts read at start ran out, not yet taken by their runs ({@link ranOut}). */
  get countsRanOut(): boolean {
    return this.#tally.anyRanOut;
  }

  /**
   * Set when `run`'s attempts ran out before this start: it is not run again, but settled with
   * this ({@link settle}), which keeps it as a dead letter.
   */
  ranOut(incoming: Incoming): AttemptsRanOut | undefined {
    const run = countedAs(incoming);
    // Only a run the start took up again can have run out: a message caught up, a dialog's run,
    // a dead letter replayed.
    if (run.source !== "catch-up" && run.source !== "replay" && run.dialog === undefined) return undefined;
    return this.ranOutRun(run);
  }

  /** {@link ranOut} for a run given as the failure stage takes it (a cron job's occurrence). */
  ranOutRun(run: Pick<FailedRun, "event" | "source" | "dialog" | "letter">): AttemptsRanOut | undefined {
    return this.#tally.ranOut(run);
  }

  /**
   * A message's first run the stop left running (left-runs.ts), ordered under `conversation`: kept
   * as a dead letter marked for replay, as a run the stop cut. False when the store refused it.
   */
  keepLeft(incoming: Incoming, conversation: string, error: Error): Promise<boolean> {
    const now = this.#o.clock.now();
    const run: FailedRun = { ...countedAs(incoming), conversation, again: () => {}, effects: () => [] };
    return this.#ends.keep(run, error, 1, now, now, true);
  }

  /**
   * The first run of `run` threw `error`. Resolves once the event is done with: handled by a later
   * attempt (true), kept as a dead letter (false) or, the stop cutting its retries, marked for replay
   * (`"replays"`: no failure); `"resumes"` for a dialog's run the stop cut, a message's first run the
   * stop's deadline aborted, a message or dialog's run the store's outage failed as the bot stopped:
   * nothing kept or marked, the next start runs it from the dialog's log or the catch-up. Never rejects.
   */
  async settle(run: FailedRun, error: unknown): Promise<SettleOutcome> {
    const o = this.#o;
    if (promptUnanswered(error)) return this.#ends.ended(run, true);
    const clock = o.clock;
    const stopping = this.#stopping.signal;
    const firstFailedAt = clock.now();
    const policy = o.retries;
    let last = error;
    // A message caught up after a crash in a pause goes on counting the attempts made before it
    // (not read when the store itself failed the run: the read would wait out its timeout); one
    // whose attempts ran out before the restart did not run here (see `ranOut`).
    const ranOut = error instanceof AttemptsRanOut;
    const before = ranOut ? error.attempts : outageOf(error) ? 0 : await this.#tally.before(run);
    let attempts = (ranOut ? 0 : 1) + before;
    let waited = false;
    /** The last attempt begun ended as the bot stopped. */
    let stopCut = false;
    /** Counted among the events the outage had run again (store-health.ts). */
    let retried = false;
    while (!isFinal(last) && !stopping.aborted) {
      const outage = outageOf(last);
      // Past the last attempt, only a run failed on the store's outage goes on: it waits for it.
      const waits = attempts >= policy.attempts;
      if (waits && !outage) break;
      let ran = false;
      const attempt = async () => {
        ran = true;
        o.metrics?.handlerRetried(run.event.type);
        attempts++;
        await withinAttemptTime(o, run, attempts, stopping, (s, holder) => run.again(s, holder));
      };
      try {
        // A replayed letter's pause holds no other letter of the bot (replay-turns.ts).
        run.turns?.paused();
        // Once the store's outage is said, its lines for each event at debug (store-health.ts).
        if (waits) {
          const level = (!waited && o.health?.quiet("waited", last)) || fenced(outage) ? "debug" : "warn";
          if (!waited && run.event.type === "cron_job") {
            const { job, scheduledFor } = run.event as JobOccurrence;
            o.log[level]({ ...outage, attempts, job, scheduledFor }, STORE_WAIT_JOB_LINE);
          } else if (!waited) o.log[level]({ ...outage, attempts }, STORE_WAIT_LINE);
          waited = true;
          await this.#waits.run(stopping, () => inTurn(run, stopping, attempt));
        } else {
          const delay = retryDelay(policy, attempts);
          const again = { ...namedRun(run), attempt: attempts, of: policy.attempts, retryInMs: delay };
          if (outage) {
            const level = o.health?.quiet("retried", last, retried) || fenced(outage) ? "debug" : "warn";
            retried ||= o.health?.failing === true && outage.code !== "STATE_FENCED";
            o.log[level]({ ...outage, ...again }, `${STORE_OUTAGE_LINE}; running it again after a pause`);
          } else
            o.log.warn({ error: inWords(last), ...again }, "handler failed; running it again after a pause");
          if (!outage) await this.#tally.failed(run, attempts, inWords(last));
          failpoint("attempt-failed");
          await sleep(clock, delay, stopping);
          await inTurn(run, stopping, async () => {
            // Counted as it begins: a crash during it, or after it failed, leaves it made.
            if (!outage) await this.#tally.failed(run, attempts + 1, inWords(last));
            await attempt();
          });
        }
        if (run.task?.left) return leftEnded(o.log, run);
        o.log.info({ attempts }, "handler succeeded on a later attempt");
        await this.#tally.done(run);
        return await this.#ends.ended(run);
      } catch (err) {
        if (!ran) break; // stopping during the pause: see below
        if (run.task?.left) return leftEnded(o.log, run);
        // A prompt unanswered, the dialog ended during the pause (an operator's end), or run by
        // another instance (its question kept first: see `ranElsewhere`): done with.
        if (promptUnanswered(err) || err instanceof DialogEnded || err instanceof LogMoved)
          return this.#ends.ended(run, promptUnanswered(err) || err instanceof DialogEnded);
        stopCut = stopping.aborted;
        if (err !== stopping.reason) last = err; // the stop's abort: the handler's own error is kept
      }
    }
    // An attempt the stop cut is not counted as made: the next start makes it again.
    if (stopCut && !isFinal(last)) await this.#tally.failed(run, attempts - 1, inWords(last));
    if (stopping.aborted && run.dialog !== undefined && !run.letter && !isFinal(last)) {
      // Kept as a letter, the dialog would have to be ended (its log refuses what a replay of
      // the letter appends), and answers sent meanwhile would reach no dialog.
      cutLog(o.log, this.cutLevel).info(
        { ...cutError(last), attempts },
        `a dialog's run was cut off by the stop: it runs again ${this.againWhere}`,
      );
      return "resumes";
    }
    if (stopping.aborted && (waited || outageOf(last)) && isMessage(run)) {
      // Kept nowhere (the outage would refuse the letter): as after a crash, the next start runs it.
      cutLog(o.log, this.cutLevel).info(
        { attempts },
        `a run waiting for the state store was cut off by the stop: it runs again ${this.againWhere}`,
      );
      return "resumes";
    }
    if (attempts === 1 + before && cutOffMessage(run, last)) {
      // Left unmarked, as a crash leaves it: the next start's catch-up runs it again, once. A
      // letter as well could run it twice, should the stop close the store before its mark.
      cutLog(o.log, this.cutLevel).info(
        cutError(last),
        `a message's run was cut off by the stop: it runs again ${this.againWhere}`,
      );
      return "resumes";
    }
    if (stopping.aborted && this.#forLease && isMessage(run) && !run.letter) {
      // Stopped for its lease: its handled mark would be refused, and the instance running the bot
      // now catches the message up. A letter as well would run it twice.
      cutLog(o.log, this.cutLevel).info(
        { ...cutError(last), attempts },
        "a message's run was cut off by the stop: it runs again at the next start",
      );
      return "resumes";
    }
    // Cut by the stop, it is replayed at the next start: only a failure that stays one is final.
    if (!stopping.aborted) failpoint("attempts-ran-out");
    if (!stopping.aborted) await this.#ends.gaveUp(run);
    const cut = stopping.aborted && !isFinal(last);
    await this.#ends.keep(run, last, attempts, firstFailedAt, clock.now(), cut);
    await this.#tally.done(run);
    return cut ? "replays" : false;
  }
}

/**
 * A later attempt the stop left (left-runs.ts) ended, the store closed: nothing is recorded, and
 * the next start takes its event as the stop left it (caught up, from its dialog's log, its letter).
 */
function leftEnded(log: Logger, run: FailedRun): "resumes" {
  log.warn(namedRun(run), LEFT_ENDED_LINE);
  return "resumes";
}

/** `fn`, in the bot's replay turn when `run` is a replayed letter's (replay-turns.ts). */
function inTurn(run: FailedRun, signal: AbortSignal, fn: () => Promise<void>): Promise<void> {
  return run.turns ? run.turns.during(signal, fn) : fn();
}

/**
 * The error of a run the stop cut, for its info line: bothost's own abort (`ROUTER_ABORTED`, whose
 * stack is bothost's timers and nothing of the bot's code) in words; a handler's own error whole.
 */
function cutError(err: unknown): { error: string } | { err: unknown } | Record<string, never> {
  if (err === undefined) return {};
  return err instanceof RouterError ? { error: inWords(err) } : { err };
}
