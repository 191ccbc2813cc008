/**
 * The parts of a conversation queue (conversation-queue.ts): a task and the control it runs with,
 * and the FIFO lines tasks wait in, one per key.
 */
import { type BudgetWaits, watchBudgetWaits } from "../api/budget-waits.ts";
import type { Logger } from "../api/logger.ts";

/** What a running task gets from its queue. */
export interface TaskControl {
  /** The conversation the task is ordered in (its key). */
  readonly key: string;
  /** Aborted on the handler timeout (of a running task) or by abortAll(). Made on first access. */
  readonly signal: AbortSignal;
  /**
   * Keep this task's key closed until `done` settles, but give its concurrency slot back as soon
   * as the task itself finishes: for work that must complete before the key's next task and
   * needs no CPU (a state store's fsync, a failed handler's pause before it runs again). The
   * task counts as done once `done` settled, and every other hold it made. Ignored after the
   * task finished or timed out.
   */
  holdKey(done: Promise<unknown>): void;
  /**
   * Give the slot back now, keep the key closed until `done` settles, then run `next` (with this
   * task's `arg`, taking over its `onDone`) as the key's next task, before the tasks that came
   * meanwhile, with a slot and a timeout of its own: for a wait of unknown length for work done
   * outside the queue. Aborted meanwhile (abortAll), `next` does not run. False (nothing done)
   * after the task finished or timed out.
   */
  resumeAfter(done: Promise<unknown>, next: QueueTask<unknown>): boolean;
  /**
   * The task is over now, whatever its promise does later: for a task that returned
   * {@link RUNS_ON}, and for a run that parked at a prompt (its handler waits, suspended, on a
   * promise that never settles). Its holds still keep the key.
   */
  end(): void;
  /** The context of the handler run this task is: its timeout's line names the handler it is in. */
  running: object | undefined;
  /**
   * A later attempt of its run is under way (the failure stage's, its key held): a stop past its
   * deadline waits for it as for a running task, and leaves it past the grace.
   */
  attempting: boolean;
  /** The stop left the task still running (left-runs.ts): nothing of its run is recorded from then on. */
  readonly left: boolean;
}

/**
 * One unit of work. It may return a promise; {@link RUNS_ON} (or a promise of it) when it goes on
 * and calls `end()` once over; anything else means it finished when it returned. `arg` is what
 * the queue's `push` was given.
 */
export type QueueTask<A = undefined> = (control: TaskControl, arg: A) => unknown;

/**
 * What a task returns that goes on after its call and says when it is over (`end()`), as a
 * handler's run does: its queue then makes no promise reaction of its own for it.
 */
export const RUNS_ON: unique symbol = Symbol("runs on until end()");

/**
 * A task that returned {@link RUNS_ON} ends once `after` settles (at once when it is no promise);
 * what `after` rejects with is logged, as its queue logs a task's error, on `to.log` (read then
 * only: a handler context makes its logger on first read).
 */
export function endAfter(
  control: TaskControl,
  after: unknown,
  to: { readonly log: Pick<Logger, "error"> },
): void {
  if (isThenable(after)) endWhenSettled(control, after, to);
  else control.end();
}

/** {@link endAfter} of a promise: apart, so that a task ending at once makes no closure. */
function endWhenSettled(
  control: TaskControl,
  after: PromiseLike<unknown>,
  to: { readonly log: Pick<Logger, "error"> },
): void {
  after.then(
    () => control.end(),
    (err: unknown) => {
      to.log.error({ err }, "handler failed");
      control.end();
    },
  );
}

/** One task, made when it starts (see {@link Line}), and its control while it runs. */
export class Task implements TaskControl, BudgetWaits {
  #controller: AbortController | undefined;
  state: "running" | "held" | "done" = "running";
  hold: Promise<unknown> | undefined;
  /** What runs in its place once its hold settled (see `resumeAfter`). */
  resume: QueueTask<unknown> | undefined;
  /** When its timeout is due (set once it returned a promise or RUNS_ON, 0 until then; moved on by its budget waits). */
  dueAt = 0;
  timedOut = false;
  /** Its calls waiting for the account's rate budget now, and since when (see `onWait`). */
  waits = 0;
  waitingSince = 0;
  /** Told when its calls begin and end waiting for the rate budget: its queue, which pauses its timeout. */
  onWait: ((task: Task, waiting: boolean) => void) | undefined = undefined;
  /** Told when it ends before its promise settles (see `end`): its queue. */
  onEnd: ((task: Task) => void) | undefined = undefined;
  /** Set by `end`: the task is over, whatever its promise does (its queue finishes it when it can). */
  endedEarly = false;
  /** Its place among its queue's running tasks; -1 when not running. */
  slot = -1;
  running: object | undefined = undefined;
  attempting = false;
  left = false;
  /** Cut by its timeout, its run going on outside the queue (overrun-tasks.ts): running, then its holds. */
  overrun: "running" | "held" | undefined = undefined;

  constructor(
    readonly key: string,
    readonly run: QueueTask<unknown>,
    readonly arg: unknown,
    readonly onDone: (() => void) | undefined,
  ) {}

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      // The calls made with it: their waits for the rate budget pause the task's timeout.
      if (this.onWait !== undefined) watchBudgetWaits(this.#controller.signal, this);
    }
    return this.#controller.signal;
  }

  began(): void {
    this.onWait?.(this, true);
  }

  ended(): void {
    this.onWait?.(this, false);
  }

  /** Its run, or a later attempt of it (the failure stage's, its key held), still goes on: a stop waits, then leaves it. */
  get stillRuns(): boolean {
    return this.state === "running" || this.overrun === "running" || (this.#held && this.attempting);
  }

  /** Done running, what it keeps as it ends still being written: a stop waits for it. */
  get writesEnd(): boolean {
    return this.#held && !this.attempting;
  }

  get #held(): boolean {
    return this.state === "held" || this.overrun === "held";
  }

  holdKey(done: Promise<unknown>): void {
    // After its timeout the key is given back: a hold then only tells when its run is over.
    if (this.state !== "running" && this.overrun === undefined) return;
    const held = this.hold;
    this.hold = held === undefined ? done : Promise.allSettled([held, done]);
  }

  resumeAfter(done: Promise<unknown>, next: QueueTask<unknown>): boolean {
    if (this.state !== "running") return false;
    this.holdKey(done);
    this.resume = next;
    return true;
  }

  end(): void {
    if (this.state === "running" || this.overrun === "running") this.onEnd?.(this);
  }

  abort(reason: unknown): void {
    this.#controller ??= new AbortController();
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }
}

/**
 * The tasks running in a queue, in no order: each knows its place (`Task.slot`), and a removed
 * one's is taken by the last, so a burst's thousands of starts and ends allocate nothing.
 */
export class RunningTasks {
  readonly #tasks: Task[] = [];

  get size(): number {
    return this.#tasks.length;
  }

  add(task: Task): void {
    task.slot = this.#tasks.length;
    this.#tasks.push(task);
  }

  delete(task: Task): void {
    if (task.slot < 0) return;
    const last = this.#tasks.pop() as Task;
    if (last !== task) {
      this.#tasks[task.slot] = last;
      last.slot = task.slot;
    }
    task.slot = -1;
  }

  /** A copy: what is done with each (its abort, its timeout) may end it. */
  list(): Task[] {
    return [...this.#tasks];
  }
}

/** A FIFO taken from the front by index (the lines ready to run: a burst makes hundreds ready at once). */
export class Fifo<T> {
  items: T[] = [];
  head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  shift(): T {
    const item = this.items[this.head] as T;
    this.items[this.head++] = undefined as T;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

/**
 * A key's tasks: the one running or held (`current`) and those waiting behind it, in order. A
 * waiting task is three slots of one array (its function, argument and `onDone`), made a
 * {@link Task} only when it starts: a burst queues thousands, and each object would be copied by
 * every young-generation collection it lives through while it waits.
 */
export class Line {
  /** The task running or held; undefined while the line waits for a slot (or is empty). */
  current: Task | undefined = undefined;
  #slots: unknown[] = [];
  #head = 0;

  constructor(readonly key: string) {}

  /** Tasks waiting behind `current`. */
  get waiting(): number {
    return (this.#slots.length - this.#head) / 3;
  }

  add(run: QueueTask<unknown>, arg: unknown, onDone: (() => void) | undefined): void {
    this.#slots.push(run, arg, onDone);
  }

  /** `run` waits first, before the tasks waiting. */
  addFirst(run: QueueTask<unknown>, arg: unknown, onDone: (() => void) | undefined): void {
    if (this.#head < 3) this.#slots.unshift(run, arg, onDone);
    else {
      this.#head -= 3;
      const at = this.#head;
      this.#slots[at] = run;
      this.#slots[at + 1] = arg;
      this.#slots[at + 2] = onDone;
    }
  }

  /** The first waiting task, now `current`. */
  next(): Task {
    const slots = this.#slots;
    const at = this.#head;
    const task = new Task(
      this.key,
      slots[at] as QueueTask<unknown>,
      slots[at + 1],
      slots[at + 2] as (() => void) | undefined,
    );
    slots[at] = slots[at + 1] = slots[at + 2] = undefined;
    this.#head = at + 3;
    if (this.#head > 3072 && this.#head * 2 > slots.length) {
      this.#slots = slots.slice(this.#head);
      this.#head = 0;
    }
    this.current = task;
    return task;
  }

  /** Remove every waiting task; returns their `onDone` callbacks, in order. */
  dropWaiting(): ((() => void) | undefined)[] {
    const dropped: ((() => void) | undefined)[] = [];
    for (let i = this.#head + 2; i < this.#slots.length; i += 3)
      dropped.push(this.#slots[i] as (() => void) | undefined);
    this.#slots = [];
    this.#head = 0;
    return dropped;
  }
}

/** Those waiting for fewer than their `limit` of a queue's tasks in flight (its `onBelow`). */
type Waiter = { limit: number; resolve: () => void; reject: (reason: unknown) => void };

export class InFlightWaiters {
  #waiters: Waiter[] = [];

  /** Resolves once `settle` is told fewer than `limit` are in flight (at once if `inFlight` is). */
  wait(inFlight: number, limit: number, signal?: AbortSignal): Promise<void> {
    if (inFlight < limit) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      // The signal outlives many waits (a bot's stop signal): a settled wait takes its listener off.
      const onAbort = () => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(signal?.reason);
      };
      const waiter = {
        limit,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        reject,
      };
      this.#waiters.push(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** `inFlight` tasks are in flight now: the waits it is below end. */
  settle(inFlight: number): void {
    // Called at each task's end: most find every wait still above its limit, and keep the list.
    const waiters = this.#waiters;
    let below = false;
    for (let i = 0; i < waiters.length && !below; i++) below = inFlight < (waiters[i] as Waiter).limit;
    if (!below) return;
    const still = [];
    for (const w of this.#waiters) {
      if (inFlight < w.limit) w.resolve();
      else still.push(w);
    }
    this.#waiters = still;
  }
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
