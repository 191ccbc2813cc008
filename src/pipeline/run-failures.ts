/**
 * A handler's run that threw (stage 4, runs.ts). A dialog the failure stops ends there
 * (dialog-ends.ts); otherwise the run is counted as failed and handed to the failure stage
 * (handler-failures.ts) as a FailedRun: how it runs again, what a dead letter of it keeps, and,
 * once the failure is settled, its dialog closed and its message recorded as handled.
 */
import { OpenProgresses } from "../effects/progress/open-progresses.ts";
import { KV } from "../state/kv.ts";
import type { JsonValue } from "../state/state-store.ts";
import { monotonicMs } from "../time/clock.ts";
import type { AnyEvent } from "../wire/events.ts";
import { type BotContext, progressesOf, type SendEffects } from "./context.ts";
import type { TaskControl } from "./conversation-queue.ts";
import {
  closeRuns,
  type DialogEndParts,
  dialogFailed,
  ENDED_MEANWHILE,
  ranElsewhere,
} from "./dialogs/dialog-ends.ts";
import { DialogEnded } from "./dialogs/dialog-log.ts";
import { endRunProgresses } from "./dialogs/end-progresses.ts";
import { Turn, untilParked } from "./dialogs/turn.ts";
import type { DispatcherParts } from "./dispatcher-parts.ts";
import { ledgerIdOf } from "./event-fields.ts";
import type { FailedRun } from "./handler-failures.ts";
import { type DispatchStats, type Incoming, replayedOf, sourceOf, stateKeyOf } from "./incoming.ts";
import { letterRecordsOf } from "./run-keys.ts";
import { runLog } from "./run-log.ts";
import { failedForGood, runFailed, runHandled } from "./run-outcomes.ts";

type FailedArgs = [
  Incoming,
  TaskControl,
  BotContext<unknown>,
  number,
  unknown,
  SendEffects | undefined,
  Turn | undefined,
];

/** What a failed run reaches of its runs (runs.ts). */
export interface FailureParts {
  o: DispatcherParts;
  stats: DispatchStats;
  ends: DialogEndParts;
  /** The event's effect records for an attempt again, after the first run's `first`. */
  effectsAgain(incoming: Incoming, first: SendEffects | undefined): SendEffects | undefined;
  /** True when the dialog `incoming` runs was ended while the run was under way (logged once). */
  endedMeanwhile(incoming: Incoming, ctx: BotContext<unknown>): boolean;
  /** Record a message as handled in the ledger (stage 5). */
  finishEvent(event: AnyEvent): Promise<void> | undefined;
}

export class RunFailures {
  readonly #p: FailureParts;

  constructor(parts: FailureParts) {
    this.#p = parts;
  }

  /** The run threw (off the hot path: its arguments come as one array). */
  threw(...[incoming, control, ctx, started, err, effects, turn]: FailedArgs): void {
    // Its progresses edit no more: a later attempt goes on, or the final failure or changed code ends them.
    const progresses = progressesOf(ctx);
    progresses?.halt();
    // Ended by an operator, or changed code: kept with the end's note first (end-progresses.ts).
    const kept = () => effects?.run.kept;
    const end = () => endRunProgresses(this.#p.ends, incoming.dialog, kept(), progresses, control.signal);
    const stopped = dialogFailed(this.#p.ends, incoming, runLog(ctx), turn, err, control.signal, {
      kept,
      end,
      againWhere: this.#p.o.failures.againWhere,
    });
    if (stopped !== false) {
      if (stopped !== true) control.holdKey(stopped);
      return;
    }
    runFailed(this.#p.o, this.#p.stats, ctx, err, started);
    this.toFailureStage(incoming, err, control, effects, progresses ?? new OpenProgresses());
  }

  /**
   * A handler threw: keep its conversation closed while it runs again (and, if every attempt
   * fails, while the event is kept as a dead letter); then record the message as handled. The
   * progresses its attempts opened end as failed when the failure is final.
   */
  toFailureStage(
    incoming: Incoming,
    err: unknown,
    control: TaskControl,
    first: SendEffects | undefined,
    progresses: OpenProgresses,
  ): void {
    let last = first;
    let parked = false;
    const dialog = incoming.dialog;
    const run: FailedRun = {
      event: incoming.event,
      source: sourceOf(incoming),
      conversation: control.key,
      ...replayedOf(incoming),
      ...(dialog ? { dialog: dialog as unknown as JsonValue } : {}),
      records: letterRecordsOf(first, ledgerIdOf(incoming.event) !== undefined),
      task: control,
      again: async (signal, holder) => {
        // Ended during the pause (an operator's end): its handler does not run again.
        if (dialog && this.#p.o.dialogs.isEnded(dialog.id)) {
          this.#p.o.log.info({ dialog: dialog.id }, ENDED_MEANWHILE);
          throw new DialogEnded(dialog.id);
        }
        last = this.#p.effectsAgain(incoming, first);
        const state = KV.run(this.#p.o.contexts.state, stateKeyOf, incoming);
        const turn = last && ledgerIdOf(incoming.event) !== undefined ? new Turn(dialog) : undefined;
        const ctx = this.#p.o.contexts.forRun(incoming, signal, true, last, state, turn, progresses);
        if (holder) holder.running = ctx;
        const started = this.#p.o.metrics ? monotonicMs() : 0;
        control.attempting = true;
        try {
          // Parked: the dialog waits again (its record kept), the attempt is done.
          parked = await untilParked(turn, this.#p.o.composer.run(ctx));
          if (control.left) return; // the store closed meanwhile: nothing of it is applied
          if (parked) await turn!.written;
          else if (!this.#p.endedMeanwhile(incoming, ctx)) await state.commit();
        } catch (err) {
          progresses.halt();
          if (err instanceof DialogEnded) {
            runLog(ctx).info({ dialog: dialog?.id }, ENDED_MEANWHILE);
            throw err;
          }
          // Run elsewhere, or cut by the bot's stop (kept for replay): no failure of the handler's.
          if (ranElsewhere(runLog(ctx), err) || this.#p.o.failures.stopped) throw err;
          runFailed(this.#p.o, this.#p.stats, ctx, err, started);
          throw err;
        } finally {
          control.attempting = false;
        }
        // Parked: counted once its dialog is over, as when a first run parks.
        if (!parked) runHandled(this.#p.o, this.#p.stats, ctx, started);
      },
      effects: () => (last?.run.kept ?? []) as unknown as JsonValue[],
      // Its dialog ended meanwhile (an operator's end): kept with the end's note first (end-progresses.ts).
      gaveUp: (signal) => {
        const ended = dialog && this.#p.o.dialogs.isEnded(dialog.id) ? dialog : undefined;
        return endRunProgresses(this.#p.ends, ended, last?.run.kept, progresses, signal);
      },
    };
    const settled = this.#p.o.failures.settle(run, err).then(async (outcome) => {
      // Over unless a later attempt parked, or the stop left it to its log: ended, or kept (the dead
      // letter carries the dialog); a new dialog its first question did not keep (its log failed), not begun.
      if (!(parked && dialog) && outcome !== "resumes")
        await closeRuns(this.#p.ends, incoming, "failed", control);
      incoming.onReplayed?.(outcome === true);
      if (outcome === false) failedForGood(this.#p.o, this.#p.stats, incoming.event.type); // "replays": cut by the stop, no failure of its own
      // "resumes": left unmarked, the next start takes it again (its log, or the catch-up).
      return incoming.letter || dialog || outcome === "resumes"
        ? undefined
        : this.#p.finishEvent(incoming.event);
    });
    control.holdKey(settled);
  }
}
