/**
 * Ordered per conversation, parallel across conversations (grammY runner's `sequentialize`).
 *
 * Guarantees, for tasks added with the same key: task n+1 starts only after task n finished
 * (returned, resolved, threw, or timed out). Tasks of different keys run in parallel, at most
 * `concurrency` at a time; when a slot frees, the key that has waited longest goes next (so one
 * busy conversation cannot starve the others). A task that runs longer than `handlerTimeoutMs` has
 * its signal aborted and is counted as finished: its slot and its key move on, even if it ignores
 * the signal (it then runs detached, and anything it throws later is only logged).
 *
 * The queue is on the hot path of event dispatch, so a synchronous task allocates one small entry
 * object and nothing else (`push()`; `add()` adds its promise): when its key is idle and a slot is
 * free it runs inside `push()`/`add()` itself, and if it returns a non-thenable (or throws) it is
 * finished right there, with no microtask, timer or promise. Tasks are started by one iterative loop (`pump`) behind a guard, so
 * a task that pushes more tasks, or a long run of synchronous tasks, never deepens the stack. The
 * AbortController behind `control.signal` is only made when a task reads it.
 *
 * Timeouts use ONE clock timer: every task has the same timeout, so tasks that returned a promise
 * are kept in the order they did so ({@link DeadlineList}) and the timer waits for the oldest one.
 * A task's timeout counts from when it returned its promise: its synchronous part cannot be
 * interrupted anyway.
 */
import type { Logger } from "../api/logger.ts";
import { silentLogger } from "../api/logger.ts";
import { type Clock, realClock } from "../time/clock.ts";
import { BelowWaiters } from "./_below-waiters.ts";
import { DeadlineList } from "./_deadline-list.ts";
import { isThenable } from "./_is-thenable.ts";
import { DONE, Entry, HELD, Line, NO_LINE, RUNNING, WAITING } from "./_queue-entry.ts";
import { RouterError } from "./router-error.ts";

/** What a running task gets from its queue. */
export interface TaskControl {
  /** Aborted on the handler timeout or abortAll(). Created on first access (most tasks never read it). */
  readonly signal: AbortSignal;
  /**
   * Keep this task's key closed until `done` settles, but give its concurrency slot back as soon
   * as the task itself finishes: for bookkeeping that must complete before the key's next task
   * and uses no CPU, such as waiting for a state store's fsync. Waiting for it inside the task
   * held a slot per fsync and capped dispatch at a few thousand events/s (bench: dispatch).
   * The task counts as done (its `add()` promise resolves) once `done` settled. Ignored after
   * the task finished or timed out.
   */
  holdKey(done: Promise<unknown>): void;
}

/**
 * One unit of work. It may return a promise; anything else means it finished when it returned.
 * `arg` is what {@link ConversationQueue.pushWith} was given (undefined for push and add).
 */
export type QueueTask<A = undefined> = (control: TaskControl, arg: A) => unknown;

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

/** Keys without tasks kept in the map before they are dropped together (see `lines`). */
const IDLE_KEYS_KEPT = 4096;

/**
 * @example
 * ```ts
 * const queue = new ConversationQueue({ concurrency: 4, handlerTimeoutMs: 30_000, log });
 * for (const event of batch) queue.push(keys.keyOf(event), (c) => bot.dispatch(makeCtx(event, c.signal)));
 * await queue.onBelow(100, signal); // backpressure before the next poll
 * await queue.onIdle();             // graceful shutdown
 * ```
 */
export class ConversationQueue {
  private readonly concurrency: number;
  private readonly timeoutMs: number;
  private readonly log: Logger;
  private readonly onError: (error: unknown, key: string) => void;
  /** Tasks that returned a promise and have not finished, oldest first; owns the one timer. */
  private readonly deadlines: DeadlineList<Entry>;
  /**
   * The line of every key with tasks. A key that ran out of tasks keeps its (empty) line until
   * {@link IDLE_KEYS_KEPT} of them pile up: deleting it at once, and adding it back with its
   * conversation's next message, churned the hash table once per event, and a map write per
   * task start and end cost more than the one lookup left (bench: dispatch).
   */
  private readonly lines = new Map<string, Line>();
  private idleKeys = 0;
  /** First entries of keys with nothing running or held, in the order they became ready. */
  private readyHead: Entry | undefined = undefined;
  private readyTail: Entry | undefined = undefined;
  /** The task running synchronously right now, so that abortAll() from inside it reaches it. */
  private current: Entry | undefined = undefined;
  /** Set while `pump` runs: a nested push() only queues, and the running loop picks it up. */
  private pumping = false;
  /** Tasks running now (held keys excluded): what `concurrency` limits. */
  private runningCount = 0;
  /** Keys with a task running or held. */
  private activeCount = 0;
  private waitingCount = 0;
  private readonly waiters = new BelowWaiters();

  constructor(options: ConversationQueueOptions = {}) {
    this.concurrency = positiveInt(options.concurrency ?? 8, "concurrency");
    this.timeoutMs = positiveInt(options.handlerTimeoutMs ?? 60_000, "handlerTimeoutMs");
    this.log = options.log ?? silentLogger;
    this.onError = options.onError ?? ((err, key) => this.log.error({ err, key }, "handler failed"));
    this.deadlines = new DeadlineList(options.clock ?? realClock, this.timeoutMs, this.expire);
  }

  /** The newest hold and the tasks waiting on it (see holdOn). */
  private sharedHold: Promise<unknown> | undefined;
  private sharedGroup: Entry[] = [];

  /** Tasks accepted and not finished: waiting plus running (and held). */
  get inFlight(): number {
    return this.waitingCount + this.activeCount;
  }

  get running(): number {
    return this.runningCount;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  /** Queue `task` behind earlier tasks of `key`. Resolves when it finished; never rejects. */
  add(key: string, task: QueueTask): Promise<void> {
    checkTask("add", key, task);
    return new Promise<void>((resolve) =>
      this.submit(new Entry(key, task as QueueTask<unknown>, resolve, undefined)),
    );
  }

  /** Like add() but allocates no promise; `onDone` (optional) is called once the task finished (or was dropped by abortAll). */
  push(key: string, task: QueueTask, onDone?: () => void): void {
    checkTask("push", key, task);
    if (onDone !== undefined && typeof onDone !== "function")
      throw argument(`push(): onDone must be a function, got ${typeof onDone}.`);
    this.submit(new Entry(key, task as QueueTask<unknown>, onDone, undefined));
  }

  /**
   * Like push(), with `arg` handed to the task: one shared task function serves every push, so
   * the caller makes no closure per task.
   */
  pushWith<A>(key: string, task: QueueTask<A>, arg: A, onDone?: () => void): void {
    checkTask("pushWith", key, task);
    if (onDone !== undefined && typeof onDone !== "function")
      throw argument(`pushWith(): onDone must be a function, got ${typeof onDone}.`);
    this.submit(new Entry(key, task as QueueTask<unknown>, onDone, arg));
  }

  /** Resolves once fewer than `limit` tasks are in flight (at once if already so). */
  onBelow(limit: number, signal?: AbortSignal): Promise<void> {
    positiveInt(limit, "onBelow limit");
    if (this.inFlight < limit) return Promise.resolve();
    return this.waiters.wait(limit, signal);
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
    const dropped: Entry[] = [];
    for (const line of this.lines.values()) {
      const first = line.head;
      if (first === undefined) continue;
      for (let e = first.state === WAITING ? first : first.next; e !== undefined; e = e.next) {
        e.state = DONE;
        dropped.push(e);
      }
      if (first.state === WAITING) this.setIdle(line);
      else {
        first.next = undefined;
        line.tail = first;
      }
    }
    this.readyHead = this.readyTail = undefined;
    this.waitingCount = 0;
    const running = this.deadlines.items();
    if (this.current !== undefined) running.push(this.current);
    for (const entry of running) entry.abort(reason);
    for (const entry of dropped) this.callDone(entry);
    this.waiters.settle(this.inFlight);
    return dropped.length;
  }

  /** Run `entry` at once when the queue is empty, else queue it behind its key. */
  private submit(entry: Entry): void {
    if (this.activeCount === 0 && this.waitingCount === 0 && !this.pumping) this.runAlone(entry);
    else this.enqueue(entry);
  }

  /**
   * Nothing is waiting, running or held, so `entry` has nothing to wait for: it runs now, and
   * joins its key's line only if it outlives this call (it returned a thenable or holds its key).
   * A synchronous task, the usual one, so costs no line, ready-line or pump bookkeeping, which
   * was about a third of the dispatch path's cost per event (bench: dispatch). Tasks it pushes
   * are queued (they find `activeCount` at 1) and start once it finished.
   */
  private runAlone(entry: Entry): void {
    entry.state = RUNNING;
    this.runningCount = 1;
    this.activeCount = 1;
    this.current = entry;
    // As in pump(): tasks pushed from here on (by the task or its onDone) wait for the pump below.
    this.pumping = true;
    try {
      let result: unknown;
      let threw = false;
      try {
        result = entry.task(entry, entry.arg);
      } catch (error) {
        threw = true;
        this.report(error, entry.key);
      }
      this.current = undefined;
      if (!threw && isThenable(result)) {
        this.joinLine(entry);
        this.awaitResult(entry, result);
      } else if (entry.hold !== undefined || this.waitingCount > 0) {
        // It holds its key, or pushed tasks: those of its key must become ready only as it
        // finishes, behind the others, as if it had been queued.
        this.joinLine(entry);
        this.finish(entry);
      } else this.doneAlone(entry);
    } finally {
      this.pumping = false;
    }
    if (this.readyHead !== undefined) this.pump();
  }

  /** The task that ran alone finished within its call: free its slot, nothing else to release. */
  private doneAlone(entry: Entry): void {
    entry.state = DONE;
    this.runningCount--;
    this.activeCount--;
    this.callDone(entry);
    this.waiters.settle(this.inFlight);
  }

  /**
   * Put a task that ran alone at the head of its key's line, ahead of any task of the same key it
   * pushed while it ran (those wait in the ready line: they leave it, and follow it instead).
   */
  private joinLine(entry: Entry): void {
    const line = this.lineOf(entry.key);
    entry.line = line;
    const first = line.head;
    if (first === undefined) line.tail = entry;
    else this.unready(first);
    entry.next = first;
    line.head = entry;
  }

  /** Take a waiting entry out of the ready line (rare: see joinLine). */
  private unready(entry: Entry): void {
    let before: Entry | undefined;
    for (let e = this.readyHead; e !== undefined; before = e, e = e.readyNext) {
      if (e !== entry) continue;
      if (before === undefined) this.readyHead = e.readyNext;
      else before.readyNext = e.readyNext;
      if (this.readyTail === e) this.readyTail = before;
      e.readyNext = undefined;
      return;
    }
  }

  /** The line of `key`, made if missing; a task is about to join it (it is no longer idle). */
  private lineOf(key: string): Line {
    let line = this.lines.get(key);
    if (line === undefined) {
      line = new Line();
      this.lines.set(key, line);
    } else if (line.head === undefined) this.idleKeys--;
    return line;
  }

  private enqueue(entry: Entry): void {
    const line = this.lineOf(entry.key);
    entry.line = line;
    if (line.tail === undefined) {
      line.head = line.tail = entry;
      this.makeReady(entry);
    } else {
      line.tail.next = entry;
      line.tail = entry;
    }
    this.waitingCount++;
    this.pump();
  }

  private makeReady(entry: Entry): void {
    if (this.readyTail === undefined) this.readyHead = entry;
    else this.readyTail.readyNext = entry;
    this.readyTail = entry;
  }

  /** Start ready tasks while slots are free. Iterative, and a no-op when nested in itself. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.runningCount < this.concurrency) {
        const entry = this.readyHead;
        if (entry === undefined) break;
        this.readyHead = entry.readyNext;
        if (this.readyHead === undefined) this.readyTail = undefined;
        entry.readyNext = undefined;
        this.waitingCount--;
        this.start(entry);
      }
    } finally {
      this.pumping = false;
    }
  }

  private start(entry: Entry): void {
    entry.state = RUNNING;
    this.runningCount++;
    this.activeCount++;
    this.current = entry;
    let result: unknown;
    try {
      result = entry.task(entry, entry.arg);
    } catch (error) {
      this.current = undefined;
      this.report(error, entry.key);
      this.finish(entry);
      return;
    }
    this.current = undefined;
    if (!isThenable(result)) this.finish(entry);
    else this.awaitResult(entry, result);
  }

  private awaitResult(entry: Entry, result: PromiseLike<unknown>): void {
    this.deadlines.add(entry);
    try {
      result.then(
        () => this.finish(entry),
        (error: unknown) => this.fail(entry, error),
      );
    } catch (error) {
      this.fail(entry, error); // a thenable whose then() throws
    }
  }

  private fail(entry: Entry, error: unknown): void {
    if (entry.state === RUNNING) this.report(error, entry.key);
    else if (entry.timedOut)
      this.log.warn({ err: error, key: entry.key }, "handler failed after it had timed out");
    this.finish(entry);
  }

  /** The task returned, settled or timed out: free its slot, and its key unless it holds it. */
  private finish(entry: Entry): void {
    if (entry.state !== RUNNING) return;
    this.deadlines.remove(entry);
    this.runningCount--;
    const hold = entry.hold;
    if (hold === undefined) this.release(entry);
    else {
      entry.state = HELD;
      entry.hold = undefined;
      this.holdOn(hold, entry);
    }
    this.pump();
  }

  /**
   * Release `entry` once `hold` settles. Tasks finishing one after another usually hold on the
   * same promise (the runtime's one commit per turn), so they share one reaction instead of one
   * each.
   */
  private holdOn(hold: Promise<unknown>, entry: Entry): void {
    if (hold === this.sharedHold) {
      this.sharedGroup.push(entry);
      return;
    }
    const group = [entry];
    this.sharedHold = hold;
    this.sharedGroup = group;
    const release = () => {
      if (this.sharedHold === hold) this.sharedHold = undefined;
      for (const held of group) this.release(held);
      this.pump();
    };
    hold.then(release, release);
  }

  /** The task is done: its key's next task (if any) joins the ready line. */
  private release(entry: Entry): void {
    entry.state = DONE;
    this.activeCount--;
    const next = entry.next;
    if (next === undefined) this.setIdle(entry.line);
    else {
      entry.next = undefined;
      entry.line.head = next;
      this.makeReady(next);
    }
    entry.line = NO_LINE;
    this.callDone(entry);
    this.waiters.settle(this.inFlight);
  }

  /** Mark a key's line as without tasks; drop such lines in bulk once there are many. */
  private setIdle(line: Line): void {
    line.head = line.tail = undefined;
    if (++this.idleKeys <= IDLE_KEYS_KEPT) return;
    for (const [k, idle] of this.lines) if (idle.head === undefined) this.lines.delete(k);
    this.idleKeys = 0;
  }

  private readonly expire = (entry: Entry): void => {
    entry.hold = undefined;
    entry.timedOut = true;
    entry.abort(
      new RouterError(
        "ROUTER_HANDLER_TIMEOUT",
        `The handler for ${entry.key} ran longer than ${this.timeoutMs} ms.`,
      ),
    );
    this.log.warn(
      { key: entry.key, timeoutMs: this.timeoutMs },
      "handler timed out; its signal was aborted and the queue moved on",
    );
    this.finish(entry);
  };

  private callDone(entry: Entry): void {
    if (entry.onDone === undefined) return;
    try {
      entry.onDone();
    } catch (err) {
      this.log.error({ err, key: entry.key }, "a queue task's onDone threw");
    }
  }

  private report(error: unknown, key: string): void {
    try {
      this.onError(error, key);
    } catch (err) {
      this.log.error({ err, key }, "the queue's onError threw");
    }
  }
}

function checkTask(method: string, key: string, task: unknown): void {
  if (typeof key !== "string" || key === "")
    throw argument(`${method}(): the key must be a non-empty string, got ${JSON.stringify(key)}.`);
  if (typeof task !== "function")
    throw argument(`${method}(): the task must be a function (control), got ${typeof task}.`);
}

function positiveInt(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw argument(`${name} must be a positive integer, got ${String(value)}.`);
  return value;
}

function argument(message: string): RouterError {
  return new RouterError("ROUTER_INVALID_ARGUMENT", message);
}
