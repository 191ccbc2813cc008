/**
 * The parts of a conversation queue (conversation-queue.ts): a task and the control it runs with,
 * and the FIFO lines tasks wait in, one per key.
 */

/** What a running task gets from its queue. */
export interface TaskControl {
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
}

/**
 * One unit of work. It may return a promise; anything else means it finished when it returned.
 * `arg` is what the queue's `push` was given.
 */
export type QueueTask<A = undefined> = (control: TaskControl, arg: A) => unknown;

/** One task, and its control while it runs. */
export class Task implements TaskControl {
  #controller: AbortController | undefined;
  state: "waiting" | "running" | "held" | "done" = "waiting";
  hold: Promise<unknown> | undefined;
  /** When its timeout is due (set once it returned a promise). */
  dueAt = 0;
  timedOut = false;

  constructor(
    readonly key: string,
    readonly run: QueueTask<unknown>,
    readonly arg: unknown,
    readonly onDone: (() => void) | undefined,
  ) {}

  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  holdKey(done: Promise<unknown>): void {
    if (this.state !== "running") return;
    const held = this.hold;
    this.hold = held === undefined ? done : Promise.allSettled([held, done]);
  }

  abort(reason: unknown): void {
    this.#controller ??= new AbortController();
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }
}

/** A FIFO taken from the front by index: one busy conversation may queue many thousands. */
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

/** A key's tasks: the one running or held (when `busy`) and those waiting behind it, in order. */
export class Line extends Fifo<Task> {
  busy = false;

  /** Remove and return every waiting task (the running or held one stays). */
  dropWaiting(): Task[] {
    const from = this.head + (this.busy ? 1 : 0);
    const dropped = this.items.slice(from);
    this.items.length = from;
    return dropped;
  }
}
