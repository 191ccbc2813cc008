/**
 * Tasks the handler timeout cut whose runs go on (conversation-queue.ts): a first attempt deaf to
 * its signal, or one that threw and whose later attempts the failure stage runs. The timeout gave
 * their key and slot back, so the queue no longer counts them; the stop still waits for them within
 * its grace and leaves those still going (left-runs.ts), so that nothing they do once the store
 * closed is recorded and their messages are handled at the next start.
 */
import type { Task } from "./queue-lines.ts";

export class OverrunTasks {
  readonly #tasks = new Set<Task>();
  #changed: { promise: Promise<void>; resolve: () => void } | undefined;

  /** `task` timed out: its run goes on outside the queue. */
  add(task: Task): void {
    task.overrun = "running";
    this.#tasks.add(task);
  }

  /**
   * `task`'s run returned or threw: over once what it holds settled (the failure stage's later
   * attempts and what it keeps as they end), each hold added meanwhile included.
   */
  ended(task: Task): void {
    if (task.overrun !== "running") return;
    task.overrun = "held";
    this.#notify();
    this.#over(task);
  }

  #over(task: Task): void {
    const hold = task.hold;
    if (hold === undefined) {
      task.overrun = undefined;
      this.#tasks.delete(task);
      this.#notify();
      return;
    }
    const again = () => {
      if (task.hold === hold) task.hold = undefined;
      this.#over(task);
    };
    hold.then(again, again);
  }

  /** The tasks whose runs go on now. */
  list(): Task[] {
    return [...this.#tasks];
  }

  /** Resolves at the next change of a task's run (it ended, or its holds settled), or as `signal` aborts. */
  changed(signal: AbortSignal): Promise<void> {
    if (this.#changed === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.#changed = { promise, resolve };
    }
    if (signal.aborted) return this.#changed.promise;
    const { promise } = this.#changed;
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener("abort", done);
        resolve();
      };
      signal.addEventListener("abort", done, { once: true });
      promise.then(done);
    });
  }

  #notify(): void {
    const changed = this.#changed;
    this.#changed = undefined;
    changed?.resolve();
  }
}
