/**
 * The queue's bookkeeping objects: a key's line of tasks, and the entry each task costs.
 * Internal to {@link ConversationQueue}.
 */
import type { DeadlineNode } from "./_deadline-list.ts";
import type { QueueTask, TaskControl } from "./conversation-queue.ts";

/**
 * A key's tasks, first (running, held or waiting) to last, linked through `Entry.next`. It stays
 * in the queue's map while the key is idle, so a key's next task costs one map lookup.
 */
export class Line {
  head: Entry | undefined = undefined;
  tail: Entry | undefined = undefined;
}
export const NO_LINE = new Line();

export const WAITING = 0;
export const RUNNING = 1;
export const HELD = 2;
export const DONE = 3;

/**
 * The one object a task costs, from push() until its key moves on: its place in its key's line,
 * in the ready line and in the deadline list, and the {@link TaskControl} the task is given
 * (itself, to save an object), with an AbortController made only if the task reads `signal`.
 */
export class Entry implements TaskControl, DeadlineNode<Entry> {
  state = WAITING;
  /** The key's next task. */
  next: Entry | undefined = undefined;
  /** The key's line of tasks (set when queued). */
  line: Line = NO_LINE;
  /** The next key in the ready line. */
  readyNext: Entry | undefined = undefined;
  deadline = 0;
  prevDue: Entry | undefined = undefined;
  nextDue: Entry | undefined = undefined;
  hold: Promise<unknown> | undefined = undefined;
  timedOut = false;
  private controller: AbortController | undefined = undefined;
  private aborted = false;
  private abortReason: unknown = undefined;

  constructor(
    readonly key: string,
    readonly task: QueueTask<unknown>,
    readonly onDone: (() => void) | undefined,
    readonly arg: unknown,
  ) {}

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  holdKey(done: Promise<unknown>): void {
    if (this.state === RUNNING) this.hold = done;
  }

  /** Abort the signal, now if it was read, else as soon as it is. The first reason wins. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }
}
