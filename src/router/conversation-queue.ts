/**
 * Ordered per conversation, parallel across conversations (grammY runner's `sequentialize`).
 *
 * Guarantees, for tasks added with the same key: task n+1 starts only after task n finished
 * (resolved, threw, or timed out). Tasks of different keys run in parallel, at most `concurrency`
 * at a time; when a slot frees, the key that has waited longest goes next (so one busy
 * conversation cannot starve the others). A task that runs longer than `handlerTimeoutMs` has its
 * signal aborted and is counted as finished: its slot and its key move on, even if it ignores the
 * signal (it then runs detached, and anything it throws later is only logged).
 */
import type { Logger } from "../api/logger.ts";
import { silentLogger } from "../api/logger.ts";
import { type Clock, realClock } from "../helpers/clock.ts";
import { RouterError } from "./router-error.ts";

/** One unit of work; `signal` aborts on timeout or {@link ConversationQueue.abortAll}. */
export type QueueTask = (signal: AbortSignal, control: TaskControl) => unknown;

/** What a running task can ask of its queue. */
export interface TaskControl {
  /**
   * Keep this task's key closed until `done` settles, but give its concurrency slot back as soon
   * as the task itself finishes: for bookkeeping that must complete before the key's next task
   * and uses no CPU, such as waiting for a state store's fsync. Waiting for it inside the task
   * held a slot per fsync and capped dispatch at a few thousand events/s (bench: dispatch).
   * The task's `add()` promise resolves once `done` settled. Ignored after a timeout.
   */
  holdKey(done: Promise<unknown>): void;
}

export interface ConversationQueueOptions {
  /** Tasks running at once (across all keys). @default 8 */
  concurrency?: number;
  /** Abort a task's signal and move on after this many ms. @default 60000 */
  handlerTimeoutMs?: number;
  /** Where errors and timeouts are logged. */
  log?: Logger;
  /** Called with every error a task throws. @default logs it at error level with the key */
  onError?: (error: unknown, key: string) => void;
  /** Time source for timeouts. @default realClock */
  clock?: Clock;
}

interface Entry {
  task: QueueTask;
  done: () => void;
}

interface Waiter {
  limit: number;
  resolve: () => void;
}

/**
 * @example
 * ```ts
 * const queue = new ConversationQueue({ concurrency: 4, handlerTimeoutMs: 30_000, log });
 * for (const event of batch) queue.add(keys.keyOf(event), (signal) => bot.dispatch(makeCtx(event, signal)));
 * await queue.onBelow(100, signal); // backpressure before the next poll
 * await queue.onIdle();             // graceful shutdown
 * ```
 */
export class ConversationQueue {
  private readonly concurrency: number;
  private readonly timeoutMs: number;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly onError: (error: unknown, key: string) => void;
  /** Waiting tasks per key; a key is present while it has tasks waiting or running. */
  private readonly byKey = new Map<string, Entry[]>();
  /** Keys with a waiting task and nothing running, in the order they became ready. */
  private readonly ready: string[] = [];
  /** Keys with a task running, or held by {@link TaskControl.holdKey}. */
  private readonly active = new Set<string>();
  /** Tasks running now (held keys excluded): what `concurrency` limits. */
  private runningCount = 0;
  private readonly controllers = new Set<AbortController>();
  private waiters: Waiter[] = [];
  private waitingCount = 0;

  constructor(options: ConversationQueueOptions = {}) {
    this.concurrency = positiveInt(options.concurrency ?? 8, "concurrency");
    this.timeoutMs = positiveInt(options.handlerTimeoutMs ?? 60_000, "handlerTimeoutMs");
    this.log = options.log ?? silentLogger;
    this.clock = options.clock ?? realClock;
    this.onError = options.onError ?? ((err, key) => this.log.error({ err, key }, "handler failed"));
  }

  /** Tasks accepted and not finished: waiting plus running. */
  get inFlight(): number {
    return this.waitingCount + this.active.size;
  }

  get running(): number {
    return this.runningCount;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  /** Queue `task` behind earlier tasks of `key`. Resolves when it finished; never rejects. */
  add(key: string, task: QueueTask): Promise<void> {
    if (typeof key !== "string" || key === "")
      throw argument(`add(): the key must be a non-empty string, got ${JSON.stringify(key)}.`);
    if (typeof task !== "function")
      throw argument(`add(): the task must be a function (signal), got ${typeof task}.`);
    return new Promise<void>((done) => {
      const entries = this.byKey.get(key);
      if (entries === undefined) {
        this.byKey.set(key, [{ task, done }]);
        this.ready.push(key);
      } else {
        if (entries.length === 0 && !this.active.has(key)) this.ready.push(key);
        entries.push({ task, done });
      }
      this.waitingCount++;
      this.pump();
    });
  }

  /** Resolves once fewer than `limit` tasks are in flight (at once if already so). */
  onBelow(limit: number, signal?: AbortSignal): Promise<void> {
    positiveInt(limit, "onBelow limit");
    if (this.inFlight < limit) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        limit,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Resolves once nothing is waiting or running. */
  onIdle(signal?: AbortSignal): Promise<void> {
    return this.onBelow(1, signal);
  }

  /**
   * Shutdown past its deadline: abort every running task's signal with `ROUTER_ABORTED` and drop
   * every waiting task (its `add()` promise resolves). Returns how many tasks were dropped.
   */
  abortAll(reason: unknown = new RouterError("ROUTER_ABORTED", "The bot is shutting down.")): number {
    let dropped = 0;
    for (const [key, entries] of this.byKey) {
      for (const entry of entries.splice(0)) {
        entry.done();
        dropped++;
      }
      if (!this.active.has(key)) this.byKey.delete(key);
    }
    this.ready.length = 0;
    this.waitingCount = 0;
    for (const controller of this.controllers) controller.abort(reason);
    this.settleWaiters();
    return dropped;
  }

  private pump(): void {
    while (this.runningCount < this.concurrency) {
      const key = this.ready.shift();
      if (key === undefined) return;
      const entry = this.byKey.get(key)?.shift();
      if (entry === undefined) continue;
      this.waitingCount--;
      this.start(key, entry);
    }
  }

  private start(key: string, entry: Entry): void {
    this.active.add(key);
    this.runningCount++;
    const controller = new AbortController();
    this.controllers.add(controller);
    let finished = false;
    let hold: Promise<unknown> | undefined;
    const control: TaskControl = {
      holdKey: (done) => {
        if (!finished) hold = done;
      },
    };
    const release = () => {
      this.active.delete(key);
      const rest = this.byKey.get(key);
      if (rest === undefined || rest.length === 0) this.byKey.delete(key);
      else this.ready.push(key);
      entry.done();
      this.pump();
      this.settleWaiters();
    };
    const finish = () => {
      if (finished) return;
      finished = true;
      this.clock.clearTimeout(timer);
      this.controllers.delete(controller);
      this.runningCount--;
      if (hold === undefined) release();
      else {
        hold.then(release, release);
        this.pump(); // the slot is free; the key stays closed until the hold settles
      }
    };
    const timer = this.clock.setTimeout(() => {
      hold = undefined;
      controller.abort(
        new RouterError(
          "ROUTER_HANDLER_TIMEOUT",
          `The handler for ${key} ran longer than ${this.timeoutMs} ms.`,
        ),
      );
      this.log.warn(
        { key, timeoutMs: this.timeoutMs },
        "handler timed out; its signal was aborted and the queue moved on",
      );
      finish();
    }, this.timeoutMs);
    Promise.resolve()
      .then(() => entry.task(controller.signal, control))
      .then(finish, (error: unknown) => {
        if (finished) this.log.warn({ err: error, key }, "handler failed after it had timed out");
        else this.report(error, key);
        finish();
      });
  }

  private report(error: unknown, key: string): void {
    try {
      this.onError(error, key);
    } catch (err) {
      this.log.error({ err, key }, "the queue's onError threw");
    }
  }

  private settleWaiters(): void {
    const inFlight = this.inFlight;
    const due = this.waiters.filter((w) => inFlight < w.limit);
    if (due.length === 0) return;
    this.waiters = this.waiters.filter((w) => inFlight >= w.limit);
    for (const w of due) w.resolve();
  }
}

function positiveInt(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw argument(`${name} must be a positive integer, got ${String(value)}.`);
  return value;
}

function argument(message: string): RouterError {
  return new RouterError("ROUTER_INVALID_ARGUMENT", message);
}
