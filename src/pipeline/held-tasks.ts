/**
 * The tasks of a conversation queue (conversation-queue.ts) that finished but hold their key
 * until a promise settles (`TaskControl.holdKey`). Tasks held on the same promise as the last
 * held one are released together: a round of completions shares one ledger commit
 * (delivery-ledger.ts), so a burst holds hundreds of tasks on one promise and waits for it once,
 * not once per task.
 */
import type { Task } from "./queue-lines.ts";

export class HeldTasks {
  /** The last promise tasks were held on, and the tasks held on it, in the order held. */
  #held: { on: Promise<unknown>; tasks: Task[] } | undefined;
  readonly #release: (tasks: readonly Task[]) => void;

  /** `release` gets the tasks held on one promise once it settled, in the order held. */
  constructor(release: (tasks: readonly Task[]) => void) {
    this.#release = release;
  }

  /** `task` is done once `hold` settled. */
  add(hold: Promise<unknown>, task: Task): void {
    const held = this.#held;
    if (held?.on === hold) held.tasks.push(task);
    else this.#holdNew(hold, task);
  }

  /** The first task held on `hold`: apart from {@link add}, whose other calls make no closure. */
  #holdNew(hold: Promise<unknown>, task: Task): void {
    const tasks = [task];
    this.#held = { on: hold, tasks };
    const release = () => {
      if (this.#held?.tasks === tasks) this.#held = undefined;
      this.#release(tasks);
    };
    hold.then(release, release);
  }
}
