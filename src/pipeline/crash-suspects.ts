/**
 * After a crash, the runs a start takes up again that were under way at an earlier crash too
 * (their count says so: failed-attempts.ts) run one at a time in the whole process, every bot's
 * alike. A handler that brings the process down is then the only one of them under way at its
 * next kill: the runs that merely shared an earlier kill with it wait for their turn, are not
 * counted again, and run once it is kept as a dead letter, instead of being kept with it.
 *
 * A run holds its turn until its attempt ends (handled, failed, parked at a prompt), and at most
 * `holdMs` (the handler timeout, past which its queue has moved on from it), so a handler that
 * never returns keeps the others waiting no longer than that. A bot that stops lets its own runs
 * go on without waiting (see {@link SuspectLane.leave}).
 */
import type { Clock, TimerHandle } from "../time/clock.ts";

interface Turn {
  readonly owner: object;
  readonly key: string;
  readonly go: () => void;
  readonly hold: { clock: Clock; ms: number };
  timer?: TimerHandle;
}

export class SuspectLane {
  #holder: Turn | undefined;
  #waiting: Turn[] = [];

  /** Resolves once run `key` of `owner` (a bot's attempts) has its turn; held until {@link release}, at most `hold.ms`. */
  take(owner: object, key: string, hold: { clock: Clock; ms: number }): Promise<void> {
    return new Promise((go) => {
      this.#waiting.push({ owner, key, go, hold });
      this.#next();
    });
  }

  /** Run `key` of `owner` is over: the next waiting run has its turn. */
  release(owner: object, key: string): void {
    const holder = this.#holder;
    if (holder === undefined || holder.owner !== owner || holder.key !== key) return;
    if (holder.timer !== undefined) holder.hold.clock.clearTimeout(holder.timer);
    this.#holder = undefined;
    this.#next();
  }

  /** `owner`'s bot stops (or starts again): its turn ends, and its waiting runs go on without one. */
  leave(owner: object): void {
    if (this.#holder?.owner === owner) this.release(owner, this.#holder.key);
    const mine = this.#waiting.filter((t) => t.owner === owner);
    if (mine.length === 0) return;
    this.#waiting = this.#waiting.filter((t) => t.owner !== owner);
    for (const turn of mine) turn.go();
  }

  #next(): void {
    if (this.#holder !== undefined) return;
    const turn = this.#waiting.shift();
    if (turn === undefined) return;
    this.#holder = turn;
    turn.timer = turn.hold.clock.setTimeout(() => this.release(turn.owner, turn.key), turn.hold.ms);
    turn.go();
  }
}

/** The process's lane: a crash brings down every bot of the process at once. */
export const CRASH_SUSPECTS = new SuspectLane();
