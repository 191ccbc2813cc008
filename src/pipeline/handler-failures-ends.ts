/**
 * How a failed run ends once no attempt is left (handler-failures.ts): kept as a dead letter (or
 * only logged without a store for them), marked for replay when the stop cut its attempts, or done
 * with (a `NoRetry` with `deadLetter: false`, a dialog ended), what it left open ended first.
 */
import { timeoutSignal } from "../api/sleep.ts";
import { failpoint } from "../effects/failpoints.ts";
import { NoRetry } from "../errors/no-retry.ts";
import type { DeadLetter } from "../state/dead-letters.ts";
import type { JsonValue } from "../state/state-store.ts";
import type { DialogRecord } from "./dialogs/dialog-record.ts";
import { dialogRunKey } from "./failed-attempts.ts";
import { describeRefusal, refusalOf, refusedError, timeoutShown } from "./handler-failures-refusals.ts";
import type { FailedRun, HandlerFailuresOptions } from "./handler-failures-types.ts";
import { handlerTimedOut } from "./router-error.ts";
import { cutByStop, cutLog } from "./stop-cut.ts";

export class FailureEnds {
  readonly #o: HandlerFailuresOptions;
  /** The bot's stop, as it is now (a new one after each restart). */
  readonly #stopping: () => AbortSignal;
  /**
   * The level of the stop's lines for each event (debug for a lease's: stop-cut.ts), and where a
   * run it cut runs again (`againAfter`).
   */
  readonly #cut: () => { level: "warn" | "debug"; where: string };

  constructor(
    options: HandlerFailuresOptions,
    stopping: () => AbortSignal,
    cut: () => { level: "warn" | "debug"; where: string },
  ) {
    this.#o = options;
    this.#stopping = stopping;
    this.#cut = cut;
  }

  /** Let the run end what it left open (its progresses), within a handler's time, unless the bot stops. */
  async gaveUp(run: FailedRun): Promise<void> {
    if (!run.gaveUp) return;
    const o = this.#o;
    const timeout = timeoutSignal(o.clock, o.handlerTimeoutMs, () => handlerTimedOut(o.handlerTimeoutMs));
    try {
      await run.gaveUp(AbortSignal.any([this.#stopping(), timeout.signal]));
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
  async ended(run: FailedRun, over = false): Promise<true> {
    if (over && !this.#stopping().aborted) await this.gaveUp(run);
    if (!run.letter) return true;
    await run.recordHandled?.();
    await this.#o.letters?.remove(run.letter.id).catch((err: unknown) => {
      this.#o.log.error({ err, deadLetter: run.letter?.id }, "could not remove the replayed dead letter");
    });
    return true;
  }

  /**
   * Keep `run`, failed on `error` after `attempts`, as a dead letter (first and last failed at
   * `first`, `last`); `interrupted`: the stop cut its attempts, so it is marked for replay.
   * False when the store refused the letter (logged).
   */
  async keep(
    run: FailedRun,
    error: unknown,
    attempts: number,
    first: number,
    last: number,
    interrupted: boolean,
  ): Promise<boolean> {
    const o = this.#o;
    if (!interrupted && !(error instanceof NoRetry && !error.deadLetter))
      o.metrics?.deadLettered(run.event.type);
    const refusal = interrupted || error instanceof NoRetry ? undefined : refusalOf(error);
    const why =
      error instanceof NoRetry
        ? "it threw NoRetry"
        : interrupted
          ? "the bot stopped"
          : refusal
            ? `${describeRefusal(refusal)}: not retried`
            : "every attempt failed";
    const refused = refusal && { refused: refusal };
    const said = { error: inWords(error) };
    try {
      if (error instanceof NoRetry && !error.deadLetter) {
        // The bot handled the failure itself: nothing kept; a replayed letter done with, as handled.
        o.log.warn(
          { err: error, attempts },
          "handler failed and threw NoRetry with deadLetter: false: not kept",
        );
        await this.ended(run);
        return true;
      }
      if (!o.letters) {
        // Without a dead-letter store the first failure's log line is all there is, but for why
        // a refused run went no further.
        if (attempts > 1 || refused)
          o.log.error(
            { ...said, attempts, ...refused },
            `handler failed (${why}); no dead-letter store keeps it`,
          );
        return false;
      }
      // Cut short by the stop (a replayed letter too): kept marked in the same write, replayed at the bot's next start.
      const retryRequestedAt = interrupted ? new Date(last) : undefined;
      const kept = refusal ? refusedError(error, refusal) : (timeoutShown(error) ?? error);
      const failed = {
        error: kept,
        attempts,
        lastFailedAt: new Date(last).toISOString(),
        effects: run.effects(),
      };
      const again = run.letter ?? (await this.#letterOfRun(run));
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
      if (interrupted) {
        const cut = this.#cut();
        cutLog(o.log, cut.level).info({ attempts, deadLetter: letter.id }, cutByStop(cut.where));
      } else
        o.log.error(
          { ...said, attempts, deadLetter: letter.id, ...refused },
          again
            ? `replayed dead letter failed again (${why})`
            : `handler failed (${why}): kept as dead letter ${letter.id}`,
        );
      await o.commit();
      failpoint("letter-kept");
      return true;
    } catch (err) {
      o.log.error({ err, original: error }, "could not keep the failed event as a dead letter");
      return false;
    }
  }

  /**
   * For a dialog's run taken up from its log, the letter still marked for replay of the same run
   * (its dialog, step and answers): a replay of it began the dialog again and a crash cut it. The
   * run is that letter's, kept again, not a second letter (letter-replay.ts then leaves it).
   */
  async #letterOfRun(run: FailedRun): Promise<DeadLetter | undefined> {
    const record = run.dialog as unknown as DialogRecord | undefined;
    if (record?.v !== 2 || !this.#o.letters) return undefined;
    const key = dialogRunKey(record);
    // A read the store fails: the run is kept as a letter of its own.
    const marked = await this.#o.letters.retryRequested().catch(() => []);
    return marked.find((l) => {
      const of = l.dialog as unknown as DialogRecord | undefined;
      return of?.v === 2 && dialogRunKey(of) === key;
    });
  }
}

/**
 * A handler's error as the lines after its `handler failed` carry it, its name and message: its
 * stack is on that line of the attempt that threw it, said once.
 */
export function inWords(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
