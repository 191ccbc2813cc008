/**
 * The calls waiting for room in one budget bucket, in two lanes: `live` (a handler's answer to an
 * event just received, and any call made without a lane) and `background` (work no person waits
 * for: a dead letter's replay, read-backs and catch-up at a start). While both lanes wait, live
 * calls start first, but every {@link LIVE_RUN}+1-th start goes to the background lane, so that a
 * steady live load never holds background work back for ever. Within a lane, calls start in the
 * order they asked.
 */

/** Which lane a call waits in when its bucket has no room. */
export type CallLane = "live" | "background";

/** Live starts in a row while background calls wait, before one background call starts. */
export const LIVE_RUN = 3;

interface Waiter {
  grant(at: number): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

const lanes = new WeakMap<AbortSignal, CallLane>();

/**
 * Every call made with `signal` waits in `lane` unless it names its own: set by the code that
 * starts a run (a dead letter's replay) for every call its handlers make with the run's signal.
 */
export function callLaneOf(signal: AbortSignal, lane: CallLane): AbortSignal {
  lanes.set(signal, lane);
  return signal;
}

/** The signal of `task` (work no one waits on), given the background lane. */
export const inBackground = (task: { readonly signal: AbortSignal }): AbortSignal =>
  callLaneOf(task.signal, "background");

/** The lane of a call: its own, its signal's, or `live`. */
export function laneOf(lane: CallLane | undefined, signal: AbortSignal | undefined): CallLane {
  return lane ?? (signal === undefined ? undefined : lanes.get(signal)) ?? "live";
}

export class WaitingLine {
  readonly #live: Waiter[] = [];
  readonly #background: Waiter[] = [];
  #liveInARow = 0;

  get size(): number {
    return this.#live.length + this.#background.length;
  }

  /**
   * Wait in `lane`: resolves with the call's start once {@link next} picks it; rejects with `signal`'s reason
   * (the call leaves the line) if it aborts first, then `onLeave` is told.
   */
  add(lane: CallLane, signal: AbortSignal | undefined, onLeave: () => void): Promise<number> {
    const queue = lane === "live" ? this.#live : this.#background;
    return new Promise<number>((resolve, reject) => {
      const waiter: Waiter = { grant: resolve, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          const index = queue.indexOf(waiter);
          if (index >= 0) queue.splice(index, 1);
          reject(signal.reason);
          onLeave();
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      queue.push(waiter);
    });
  }

  /**
   * How many of the waiting calls start before a call asking now in `lane`, as {@link next} would
   * pick them: for a live call, the live ones and the background starts interleaved among them;
   * for a background call, the background ones and the live starts interleaved among them.
   */
  ahead(lane: CallLane): number {
    // The call asking now, last in its lane: it starts once its lane is empty.
    let live = this.#live.length + (lane === "live" ? 1 : 0);
    let background = this.#background.length + (lane === "background" ? 1 : 0);
    let inARow = this.#liveInARow;
    for (let count = 0; ; count++) {
      const takeLive = live > 0 && (background === 0 || inARow < LIVE_RUN);
      inARow = takeLive && background > 0 ? inARow + 1 : 0;
      if (takeLive) live--;
      else background--;
      if ((lane === "live" ? live : background) === 0) return count;
    }
  }

  /** Start the next waiting call at `at` (live first, within the background lane's share); false if none waits. */
  next(at: number): boolean {
    const backgroundWaits = this.#background.length > 0;
    const takeLive = this.#live.length > 0 && (!backgroundWaits || this.#liveInARow < LIVE_RUN);
    this.#liveInARow = takeLive && backgroundWaits ? this.#liveInARow + 1 : 0;
    const waiter = takeLive ? this.#live.shift() : this.#background.shift();
    if (waiter === undefined) return false;
    if (waiter.onAbort) waiter.signal?.removeEventListener("abort", waiter.onAbort);
    waiter.grant(at);
    return true;
  }
}
