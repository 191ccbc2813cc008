/**
 * The timeouts of a conversation queue's running tasks (conversation-queue.ts), on one clock
 * timer for all of them: armed for the earliest deadline, a sweep expires every task past its
 * own and arms it again for the next. A task's deadline stands still while its calls wait for
 * the account's rate budget (the handler is not stuck; the account is at its limit).
 */
import type { Clock, TimerHandle } from "../time/clock.ts";
import type { RunningTasks, Task } from "./queue-lines.ts";

export class TaskTimeouts {
  readonly #clock: Clock;
  readonly #ms: number;
  readonly #running: RunningTasks;
  readonly #expire: (task: Task) => void;
  #timer: TimerHandle | undefined;
  /** When the armed timer fires. */
  #timerAt = 0;

  /** `expire` is called for each running task found past its deadline. */
  constructor(clock: Clock, ms: number, running: RunningTasks, expire: (task: Task) => void) {
    this.#clock = clock;
    this.#ms = ms;
    this.#running = running;
    this.#expire = expire;
  }

  /** Time `task` from now; the timer is armed for it unless it already is (a sweep finds it then). */
  start(task: Task): void {
    task.dueAt = this.#clock.now() + this.#ms;
    if (this.#timer === undefined) this.#arm(task.dueAt);
  }

  /**
   * Time out every task past its deadline, then wait for the next one due. A task whose calls wait
   * for the account's rate budget is not timed meanwhile (see `onWait`).
   */
  readonly #sweep = (): void => {
    this.#timer = undefined;
    const now = this.#clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const task of this.#running.list()) {
      if (task.waits > 0 || task.dueAt === 0) continue;
      if (task.dueAt <= now) this.#expire(task);
      else next = Math.min(next, task.dueAt);
    }
    if (next !== Number.POSITIVE_INFINITY) this.#arm(next);
  };

  #arm(at: number): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = this.#clock.setTimeout(this.#sweep, Math.max(0, at - this.#clock.now()));
  }

  /**
   * A task's calls began or ended waiting for the account's rate budget: its timeout stands still
   * while one waits, its deadline moved on by the wait once none does.
   */
  readonly onWait = (task: Task, waiting: boolean): void => {
    if (task.state !== "running") return;
    const now = this.#clock.now();
    if (waiting) {
      if (task.waits++ === 0) task.waitingSince = now;
      return;
    }
    if (task.waits === 0 || --task.waits > 0 || task.dueAt === 0) return;
    task.dueAt += now - task.waitingSince;
    if (this.#timer === undefined || this.#timerAt > task.dueAt) this.#arm(task.dueAt);
  };

  /**
   * The queue is idle: its timer goes. Not sooner: while tasks wait, the next one would arm it
   * again at once (a timer set and cleared per task of a burst); a sweep that finds a task not
   * yet due arms it for that task.
   */
  disarm(): void {
    if (this.#timer === undefined) return;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
