/**
 * The attempts a message's handler (a cron job's occurrence, a dialog's run) failed, kept in the
 * bot's store while it is retried (`<bot>/attempts`: `m:<id>`, `j:<job>@<time>`, `d:<id>:…`). A
 * kill -9 in the pause between two attempts leaves the message unmarked (the occurrence under way,
 * the dialog's answer not yet run through), and the next start runs it again (its catch-up, the
 * job's restart, the dialog's log): its count goes on from the attempts made before, so that the
 * handler runs at most `retries.attempts` times in all. One write per failed attempt before its
 * pause and one read per failed run, nothing for a run that succeeds at once, and nothing while
 * the store itself fails the run (its outage: see handler-failures.ts). A count left behind (the
 * message handled at once after a restart) expires after a day; a message first retried longer
 * ago than that starts counting again.
 *
 * Each later attempt is counted as it begins, with the error of the one before: a kill -9 during
 * the last attempt, or after it failed and before its dead letter was kept, leaves the count at
 * `retries.attempts`. The next start reads the counts once, and a run whose attempts ran out is
 * not run again: it is kept as a dead letter at once ({@link AttemptsRanOut}).
 *
 * A first attempt is counted as it begins only after a start that followed no clean stop (a kill,
 * a crash: the key {@link UNDER_WAY} written at each start is still there), and only for the runs
 * that start takes up again (a message caught up, a dialog's run from its log, a job's occurrence
 * under way, a dead letter marked for replay: an operator's retry, a kept webhook delivery). A handler that kills the process (out of memory, a native crash, `process.exit`)
 * then brings it down at most `retries.attempts` + 1 times (its first run, before any kill, is
 * not counted) before its run is kept as a dead letter, instead of at every start. A run under way
 * at such a kill is counted alike; once it has been, it runs alone among such runs of the process
 * (crash-suspects.ts), so that it is counted again only when it is itself the run under way.
 */
import { budgetWait } from "../api/budget-waits.ts";
import { BothostError } from "../errors/bothost-error.ts";
import type { JsonValue, StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import type { AnyEvent } from "../wire/events.ts";
import { CRASH_SUSPECTS, type SuspectLane } from "./crash-suspects.ts";
import type { DialogRecord } from "./dialogs/dialog-record.ts";
import { ledgerIdOf } from "./event-fields.ts";
import type { FailedRun } from "./handler-failures-types.ts";
import type { JobOccurrence } from "./incoming.ts";
import { isMessage } from "./stop-cut.ts";

const KEPT_MS = 86_400_000;
/** Written at each start, deleted at a clean stop: found at a start, the last one ended in a crash. */
const UNDER_WAY = "under-way";

/** A count as kept: the attempts made (or begun), and the error of the last one known to have failed. */
type Count = { n: number; error?: string };

/** A count as stored: a number (the attempts that failed), or a {@link Count}. */
function countOf(value: JsonValue | undefined): Count | undefined {
  if (typeof value === "number") return { n: value };
  const c = value as Partial<Count> | null | undefined;
  return typeof c?.n === "number" ? (c as Count) : undefined;
}

/**
 * In place of a run whose attempts ran out before the bot restarted (the last one cut off by the
 * restart, or its dead letter's write): it is kept as a dead letter without running again.
 */
export class AttemptsRanOut extends BothostError<"ATTEMPTS_RAN_OUT"> {
  override readonly name = "AttemptsRanOut";
  /** The attempts made before the restart. */
  readonly attempts: number;
  constructor(attempts: number, error: string | undefined) {
    const before = error === undefined ? "" : `; the one before it failed: ${error}`;
    super(
      "ATTEMPTS_RAN_OUT",
      `all ${attempts} attempts were made before the bot restarted (what became of the last was lost with the restart${before})`,
    );
    this.attempts = attempts;
  }
}

/**
 * A dialog's run, by what it runs for: its step, and the answers and unanswered ends (a deadline,
 * a deleted question) its log records. A failed run appends values and effects but no answer, so
 * its attempts, and its run again from the log after a crash, share the key; the next answer or
 * deadline makes another.
 */
export function dialogRunKey(dialog: DialogRecord): string {
  const ends = dialog.steps.filter((s) => s.timedOut || s.deleted).length;
  return `d:${dialog.id}:${dialog.step}:${dialog.answered.length}:${ends}`;
}

export class FailedAttempts {
  readonly #store: StateStore | undefined;
  readonly #commit: () => Promise<void>;
  /** The counts read at start that reached the attempts allowed, by key: each taken once by {@link ranOut}. */
  #ranOut = new Map<string, Count>();
  /** The start followed no clean stop: the first attempts of the runs it takes up again are counted. */
  #recovering = false;
  /** The keys of the runs counted as their first attempt began ({@link begins}), with the count before it. */
  #begun = new Map<string, number>();

  /** How long a run keeps its turn among the suspects at most (the handler timeout). */
  readonly #hold: { clock: Clock; ms: number };
  readonly #lane: SuspectLane;

  constructor(
    store: StateStore | undefined,
    commit: () => Promise<void>,
    hold: { clock: Clock; ms: number },
    lane = CRASH_SUSPECTS,
  ) {
    this.#store = store;
    this.#commit = commit;
    this.#hold = hold;
    this.#lane = lane;
  }

  /**
   * The key of `run`'s count: a dead letter's replay (`l:<letter>`: the letter stays marked when a
   * crash cuts it, so the next start replays it again), a message's own run, a dialog's, or a cron
   * job's occurrence (run again at the next start when a crash cut it).
   */
  #keyOf(run: Pick<FailedRun, "event" | "source" | "dialog" | "letter">): string | undefined {
    if (this.#store === undefined) return undefined;
    if (run.letter) return `l:${run.letter.id}`;
    if (run.dialog !== undefined) return dialogRunKey(run.dialog as unknown as DialogRecord);
    if (run.event.type === "cron_job") {
      const { job, scheduledFor } = run.event as JobOccurrence;
      return `j:${job}@${scheduledFor}`;
    }
    const id = isMessage(run) ? ledgerIdOf(run.event as AnyEvent) : undefined;
    return id === undefined ? undefined : `m:${id}`;
  }

  /** At a start: read the counts once, and keep those that reached `attempts` (a store that fails the read: none). */
  async load(attempts: number): Promise<boolean> {
    [this.#ranOut, this.#begun] = [new Map(), new Map()];
    this.#lane.leave(this);
    const listed = (await this.#store?.list().catch(() => undefined)) ?? [];
    this.#recovering = false;
    for (const { key, value } of listed) {
      const count = countOf(value);
      if (count !== undefined && count.n >= attempts) this.#ranOut.set(key, count);
      if (key === UNDER_WAY) this.#recovering = true;
    }
    await this.#store
      ?.set(UNDER_WAY, true)
      .then(() => this.#commit())
      .catch(() => {});
    return this.#recovering;
  }

  /** The start followed no clean stop (see {@link UNDER_WAY}). */
  get recovering(): boolean {
    return this.#recovering;
  }

  /** Some runs were counted as they began, and are not over. */
  get counting(): boolean {
    return this.#begun.size > 0;
  }

  /** The bot stops: its runs wait for no turn among the suspects (crash-suspects.ts). */
  leave(): void {
    this.#lane.leave(this);
  }

  /** The bot stopped cleanly: the next start is no recovery (see {@link UNDER_WAY}). */
  async stopped(): Promise<void> {
    await this.#store?.delete(UNDER_WAY).catch(() => {});
  }

  /**
   * After a crash, a run the start took up again (`again`) has its first attempt counted before
   * it begins; undefined (nothing to wait for) otherwise, and on the hot path. One counted before
   * (under way at an earlier crash) first waits for its turn among the suspects (`task`: its
   * run's, whose handler timeout does not count that wait; its signal read only then, as a
   * task's signal is made on first read).
   */
  begins(
    run: Pick<FailedRun, "event" | "source" | "dialog" | "letter">,
    again: boolean,
    task?: { readonly signal: AbortSignal },
  ): Promise<void> | undefined {
    if (!this.#recovering || !again) return undefined;
    const key = this.#keyOf(run);
    if (key === undefined || this.#begun.has(key)) return undefined;
    return this.#store!.get(key)
      .then(async (value) => {
        const count = countOf(value);
        // Not stuck but waiting for its turn: the handler timeout of `task`'s run is paused meanwhile.
        if (count !== undefined && count.n > 0)
          await budgetWait(this.#lane.take(this, key, this.#hold), task?.signal);
        this.#begun.set(key, count?.n ?? 0);
        await this.#store!.set(key, { ...count, n: (count?.n ?? 0) + 1 }, { ttlMs: KEPT_MS });
        await this.#commit();
      })
      .catch(() => {});
  }

  /** `run`'s attempt ended without failing (handled, or its question kept): a count {@link begins} made goes. */
  ran(run: Pick<FailedRun, "event" | "source" | "dialog" | "letter">): void {
    if (this.#begun.size === 0) return;
    const key = this.#keyOf(run);
    if (key === undefined || !this.#begun.delete(key)) return;
    this.#lane.release(this, key);
    void this.#store!.delete(key).catch(() => {});
  }

  /** Some counts read at start ran out, and their runs have not come yet. */
  get anyRanOut(): boolean {
    return this.#ranOut.size > 0;
  }

  /** When `run`'s attempts ran out before this start (see {@link load}): what it is kept as instead of running. */
  ranOut(run: Pick<FailedRun, "event" | "source" | "dialog" | "letter">): AttemptsRanOut | undefined {
    if (this.#ranOut.size === 0) return undefined;
    const key = this.#keyOf(run);
    const count = key === undefined ? undefined : this.#ranOut.get(key);
    if (key === undefined || count === undefined) return undefined;
    this.#ranOut.delete(key);
    return new AttemptsRanOut(count.n, count.error);
  }

  /** The attempts of `run`'s message made before this process ran it (0 when unknown). */
  async before(run: FailedRun): Promise<number> {
    const key = this.#keyOf(run);
    if (key === undefined) return 0;
    // Counted as it began (see `begins`): the attempts before it.
    const begun = this.#begun.get(key);
    if (begun !== undefined) return begun;
    return countOf(await this.#store!.get(key).catch(() => undefined))?.n ?? 0;
  }

  /**
   * `n` attempts of `run`'s message were made or begun (`error`: that of the last one that failed):
   * kept (committed) before its pause, and as the next begins. A store failing the write is no
   * failure of the run.
   */
  async failed(
    run: Pick<FailedRun, "event" | "source" | "dialog" | "letter">,
    n: number,
    error?: string,
  ): Promise<void> {
    const key = this.#keyOf(run);
    if (key === undefined) return;
    // Its attempt is over: a later one runs beside the others, counted as it begins.
    this.#lane.release(this, key);
    const count: Count = error === undefined ? { n } : { n, error };
    await this.#store!.set(key, count, { ttlMs: KEPT_MS })
      .then(() => this.#commit())
      .catch(() => {});
  }

  /** `run`'s message is done with (handled, or kept as a dead letter): its count goes. */
  async done(run: FailedRun): Promise<void> {
    const key = this.#keyOf(run);
    if (key === undefined) return;
    this.#begun.delete(key);
    this.#lane.release(this, key);
    await this.#store!.delete(key).catch(() => {});
  }
}
