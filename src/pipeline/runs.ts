/**
 * Stages 4 and 5 of a bot's pipeline (see dispatcher.ts): build an event's context and run the
 * middleware and handlers (the composer), then apply the run's staged state and record the
 * message as handled; a run that threw goes to the failure stage (run-failures.ts). A
 * message's run is a turn of a dialog (dialogs/): it may park at a `ctx.prompt`, which ends it.
 */
import type { EffectRecord } from "../effects/effect-records.ts";
import { failpoint } from "../effects/failpoints.ts";
import { OpenProgresses } from "../effects/progress/open-progresses.ts";
import { whereThrown } from "../errors/where-thrown.ts";
import type { DeadLetter } from "../state/dead-letters.ts";
import { KV, type StateRun } from "../state/kv.ts";
import { monotonicMs } from "../time/clock.ts";
import type { AnyEvent } from "../wire/events.ts";
import { type BotContext, progressesOf, type SendEffects } from "./context.ts";
import { endAfter, RUNS_ON, type TaskControl } from "./conversation-queue.ts";
import { type DialogEndParts, ENDED_MEANWHILE, endDialog, ranElsewhere } from "./dialogs/dialog-ends.ts";
import { DialogEnded } from "./dialogs/dialog-log.ts";
import { endRunProgresses } from "./dialogs/end-progresses.ts";
import { replayEffects } from "./dialogs/replay-effects.ts";
import { keptLater, Turn } from "./dialogs/turn.ts";
import type { DispatcherParts } from "./dispatcher-parts.ts";
import { ledgerIdOf } from "./event-fields.ts";
import { type DispatchStats, type Incoming, stateKeyOf } from "./incoming.ts";
import { LEFT_ENDED_LINE } from "./left-runs.ts";
import { RunFailures } from "./run-failures.ts";
import { eventRecords, MessageEffects } from "./run-keys.ts";
import { runLog } from "./run-log.ts";
import { runHandled } from "./run-outcomes.ts";

const UNAWAITED_PROMPT =
  "a handler ended with a ctx.prompt() under way (not awaited): its question is not kept, and the person's reply is an ordinary message; await the prompt";

/**
 * A run of `ctx` ended with a prompt under way: said, with where the bot's code called it and the
 * command that ran, if one did (the prompt keeps nothing).
 */
function unawaitedPrompt(ctx: BotContext<unknown>, turn: Turn | undefined): void {
  const unawaited = turn?.unawaited();
  if (unawaited === undefined) return;
  const at = whereThrown(unawaited.at);
  const command = ctx.command?.name;
  runLog(ctx).warn({ ...(at && { at }), ...(command && { command }) }, UNAWAITED_PROMPT);
}

/** A first run carries no effect records (one shared empty list, not one per message). */
const NOTHING_CARRIED: readonly EffectRecord[] = Object.freeze([]);
type Effects = SendEffects | undefined;

export class HandlerRuns {
  readonly #o: DispatcherParts;
  readonly #stats: DispatchStats;
  readonly #finish: (id: number) => Promise<void> | undefined;
  /** What a dialog's run needs to end it. */
  readonly #ends: DialogEndParts;
  /** The runs that threw, to their dialog's end or the failure stage. */
  readonly #failedRuns: RunFailures;

  /** `finish(id)`: records a message as handled in the ledger (begun at stage 1). */
  constructor(
    parts: DispatcherParts,
    stats: DispatchStats,
    finish: (id: number) => Promise<void> | undefined,
  ) {
    this.#o = parts;
    this.#stats = stats;
    this.#finish = finish;
    this.#ends = { dialogs: parts.dialogs, contexts: parts.contexts, log: parts.log };
    this.#failedRuns = new RunFailures({
      o: parts,
      stats,
      ends: this.#ends,
      effectsAgain: (incoming, first) => this.#effectsOf(incoming, true, first),
      endedMeanwhile: (incoming, ctx) => this.#endedMeanwhile(incoming, ctx),
      finishEvent: (event) => this.#finishEvent(event),
    });
  }

  /**
   * 4. run, then stage 5 (or the failure stage); synchronously when every middleware and handler
   * is synchronous (no promise at all). The context's signal is the queue's: it aborts on the
   * handler timeout and at the shutdown deadline, not at stop() (that would cut every reply short).
   * With `incoming.dialog`, the run replays that dialog's log (the dialog engine decided so).
   */
  readonly run = (control: TaskControl, incoming: Incoming): unknown => {
    // Out of attempts before this start: a dead letter, not run; or counted as it begins (failed-attempts.ts).
    const { failures } = this.#o;
    const ranOut = failures.countsRanOut ? failures.ranOut(incoming) : undefined;
    if (ranOut !== undefined)
      return this.#failedRuns.toFailureStage(incoming, ranOut, control, undefined, new OpenProgresses());
    const counted = failures.recovering ? failures.beginsAgain(incoming, control) : undefined;
    return counted ? counted.then(() => this.#run(control, incoming)) : this.#run(control, incoming);
  };

  /** {@link run}, past the checks of the attempts counted before this start. */
  readonly #run = (control: TaskControl, incoming: Incoming): unknown => {
    const rerun = incoming.replayed || incoming.letter !== undefined || incoming.repeatable === true;
    const effects = this.#effectsOf(incoming, rerun);
    const state = KV.run(this.#o.contexts.state, stateKeyOf, incoming);
    // A message's run can ask (ctx.prompt): it is a turn of a dialog.
    const turn = effects && ledgerIdOf(incoming.event) !== undefined ? new Turn(incoming.dialog) : undefined;
    const ctx = this.#o.contexts.forRun(incoming, control, incoming.replayed, effects, state, turn);
    control.running = ctx;
    const started = this.#o.metrics ? monotonicMs() : 0;
    let pending: Promise<void> | undefined;
    try {
      pending = this.#o.composer.run(ctx);
    } catch (err) {
      unawaitedPrompt(ctx, turn);
      return this.#failedRuns.threw(incoming, control, ctx, started, err, effects, turn);
    }
    if (pending === undefined) {
      unawaitedPrompt(ctx, turn);
      return this.#succeeded(incoming, control, ctx, started, state, effects, turn);
    }
    return this.#runOn(pending, incoming, control, ctx, started, state, effects, turn);
  };

  /**
   * A run whose handlers returned a promise goes on: once it settles, stage 5 or the failure
   * stage, then its task ends (RUNS_ON). Apart from {@link run}, whose synchronous runs then make
   * no closures. A run that parks (its prompt waits) is over then, its task ended: its handler's
   * promise never settles.
   */
  #runOn(
    pending: Promise<void>,
    incoming: Incoming,
    control: TaskControl,
    ctx: BotContext<unknown>,
    started: number,
    state: StateRun,
    effects: Effects,
    turn: Turn | undefined,
  ): typeof RUNS_ON {
    if (turn !== undefined) turn.onPark = () => this.#parked(incoming, control, ctx, turn, started, effects);
    pending.then(
      () => this.#settled(incoming, control, ctx, started, state, effects, turn, false, undefined),
      (err: unknown) => this.#settled(incoming, control, ctx, started, state, effects, turn, true, err),
    );
    return RUNS_ON;
  }

  /**
   * The handlers' promise settled (`failed`: rejected with `err`): stage 5 or the failure stage,
   * then the run's task ends (once the run's state writes are applied, when it has some). A run
   * that parked ended its task then.
   */
  #settled(
    incoming: Incoming,
    control: TaskControl,
    ctx: BotContext<unknown>,
    started: number,
    state: StateRun,
    effects: Effects,
    turn: Turn | undefined,
    failed: boolean,
    err: unknown,
  ): void {
    if (turn?.parked) return;
    // Left by the stop, which closed the store meanwhile: its event is handled at the next start
    // (a dialog's run too, whose incoming is not its task's: the task is marked).
    if (control.left) {
      runLog(ctx).warn(LEFT_ENDED_LINE);
      control.end();
      return;
    }
    unawaitedPrompt(ctx, turn);
    let after: unknown;
    try {
      after = failed
        ? this.#failedRuns.threw(incoming, control, ctx, started, err, effects, turn)
        : this.#succeeded(incoming, control, ctx, started, state, effects, turn);
    } catch (error) {
      after = Promise.reject(error);
    }
    endAfter(control, after, ctx);
  }

  /**
   * The run parked, and its task ends: its dialog waits, recorded; its message is handled in the
   * ledger (a replayed letter is done with), or the run failed. The stats count it once its dialog
   * is over, not here.
   */
  #parked(
    incoming: Incoming,
    control: TaskControl,
    ctx: BotContext<unknown>,
    turn: Turn,
    started: number,
    effects: SendEffects | undefined,
  ): void {
    const failed = (err: unknown) =>
      this.#failedRuns.threw(incoming, control, ctx, started, err, effects, turn);
    // Its question's log first: a message whose dialog was never kept is caught up again.
    control.holdKey(
      turn.written.then(
        () => {
          failpoint("question-logged");
          return this.#effectsHold(incoming);
        },
        (err: unknown): unknown => {
          // Ended meanwhile (an operator's end): its progresses end as failed (#runFailed), before the end's note.
          if (err instanceof DialogEnded) {
            runLog(ctx).info({ dialog: incoming.dialog?.id }, ENDED_MEANWHILE);
            const progresses = progressesOf(ctx);
            progresses?.halt();
            const ended = endRunProgresses(
              this.#ends,
              incoming.dialog,
              effects?.run.kept,
              progresses,
              control.signal,
            );
            return Promise.all([ended, this.#effectsHold(incoming)]);
          }
          // Run elsewhere (its question kept first); a first question cut by the timeout: retried.
          if (ranElsewhere(this.#o.log, err)) return this.#effectsHold(incoming);
          if (!incoming.dialog && keptLater(control.signal, err)) return failed(err);
          this.#o.log.warn(
            { err },
            "a dialog's question was not recorded before the stop: its message runs again at the next start",
          );
          return undefined;
        },
      ),
    );
    control.end();
  }

  /** The handlers returned: the run's staged state writes are applied (if any), then stage 5. */
  #succeeded(
    incoming: Incoming,
    control: TaskControl,
    ctx: BotContext<unknown>,
    started: number,
    state: StateRun,
    effects: SendEffects | undefined,
    turn: Turn | undefined,
  ): unknown {
    // A dialog's replay that returned short of its recorded questions ran other code.
    const changed = incoming.dialog && turn?.unfinished();
    if (changed) return this.#failedRuns.threw(incoming, control, ctx, started, changed, effects, turn);
    // Ended meanwhile (an operator's end): the run's state writes since its last question are dropped.
    if (turn !== undefined && this.#endedMeanwhile(incoming, ctx)) {
      runHandled(this.#o, this.#stats, ctx, started);
      return this.#effectsDone(incoming, control);
    }
    const applied = state.commit();
    if (applied !== undefined)
      return this.#afterCommit(applied, incoming, control, ctx, started, state, effects);
    runHandled(this.#o, this.#stats, ctx, started);
    // A dialog that ran to its end is over; a new one its prompt did not keep is not begun.
    endDialog(this.#ends, control, incoming, "handler");
    return this.#effectsDone(incoming, control);
  }

  /** The run's state writes land, then stage 5 (or the failure stage, should they fail). */
  #afterCommit(
    applied: Promise<boolean>,
    incoming: Incoming,
    control: TaskControl,
    ctx: BotContext<unknown>,
    started: number,
    state: StateRun,
    effects: Effects,
  ): Promise<unknown> {
    return applied.then(
      () => this.#succeeded(incoming, control, ctx, started, state, effects, undefined),
      (err: unknown) => this.#failedRuns.threw(incoming, control, ctx, started, err, effects, undefined),
    );
  }

  /** An event's effect records for this run (a re-run reads them); `first`: a run again's first run's. */
  #effectsOf(incoming: Incoming, rerun: boolean, first?: SendEffects): Effects {
    const records = this.#o.effects;
    if (records === undefined) return undefined;
    const id = ledgerIdOf(incoming.event);
    if (id === undefined) return eventRecords(records, incoming, rerun, first ?? this.#o.clock.now());
    const dialog = incoming.dialog;
    if (dialog !== undefined) return replayEffects(records, incoming, dialog, id, rerun);
    const carried = (incoming.letter?.effects ?? NOTHING_CARRIED) as unknown as EffectRecord[];
    return new MessageEffects(records, incoming.event, id, rerun, carried, incoming.beforeAsking);
  }

  /** True when the dialog `incoming` runs was ended while the run was under way (logged once). */
  #endedMeanwhile(incoming: Incoming, ctx: BotContext<unknown>): boolean {
    const id = incoming.dialog?.id;
    if (id === undefined || !this.#o.dialogs.isEnded(id)) return false;
    runLog(ctx).info({ dialog: id }, ENDED_MEANWHILE);
    return true;
  }

  /**
   * 5. effects: the handler finished and what it did has happened. A message is recorded as
   * handled; when that record must be durable before the conversation's next message, its key
   * is held until it is. A replayed dead letter leaves the list before the conversation moves on.
   */
  #effectsDone(incoming: Incoming, control: TaskControl): void {
    const hold = this.#effectsHold(incoming);
    if (hold !== undefined) control.holdKey(hold);
  }

  /** Stage 5 for a message the dialog engine handled (an answer recorded, a copy of one). */
  finished(incoming: Incoming): Promise<unknown> | undefined {
    return this.#effectsHold(incoming);
  }

  /** Counts a copy of an answer already recorded. */
  duplicate(): void {
    this.#stats.duplicates++;
  }

  /** Stage 5's writes for `incoming`: what its key must wait for, if anything. */
  #effectsHold(incoming: Incoming): Promise<unknown> | undefined {
    this.#o.failures.ranAgain(incoming);
    if (incoming.letter) return this.#letterDone(incoming, incoming.letter);
    return incoming.dialog ? undefined : this.#finishEvent(incoming.event);
  }

  /** A replayed dead letter is done: recorded as handled, then off the list. */
  async #letterDone(incoming: Incoming, letter: DeadLetter): Promise<void> {
    await incoming.recordHandled?.();
    await this.#o.letters?.remove(letter.id);
    incoming.onReplayed?.(true);
  }

  /** Record a message as handled in the ledger (begun at stage 1). */
  #finishEvent(event: AnyEvent): Promise<void> | undefined {
    const id = ledgerIdOf(event);
    return id === undefined ? undefined : this.#finish(id);
  }
}
