/**
 * Ordered per conversation, parallel across conversations (grammY runner's `sequentialize`).
 *
 * Task n+1 of a key starts only after task n finished (returned, resolved, threw, or timed out).
 * Keys run in parallel, at most `concurrency` at a time; a freed slot goes to the key that has
 * waited longest, so one busy conversation cannot starve the others. A task that runs longer than
 * `handlerTimeoutMs` (from when it returned its promise, or RUNS_ON) has its signal aborted and
 * counts as finished, even if it ignores the signal.
 *
 * A synchronous task runs inside `push()` when its key is free and a slot is open: no promise, no
 * timer. One loop behind a guard starts tasks, so a task that pushes more never deepens the stack;
 * one clock timer serves every timeout (task-timeouts.ts). Time a task's calls spend waiting for
 * the account's rate budget does not count against its timeout. A task that holds its key is
 * released with the others held on the same promise (held-tasks.ts).
 */
import type { Logger } from "../api/logger.ts";
import { silentLogger } from "../api/logger.ts";
import { type Clock, nextTurn } from "../time/clock.ts";
import { taskFields } from "./event-fields.ts";
import { handlerOf } from "./handler-names.ts";
import { HeldTasks } from "./held-tasks.ts";
import { OverrunTasks } from "./overrun-tasks.ts";
import {
  Fifo,
  InFlightWaiters,
  isThenable,
  Line,
  type QueueTask,
  RUNS_ON,
  RunningTasks,
  Task,
} from "./queue-lines.ts";
import { handlerTimedOut, positiveInt, RouterError } from "./router-error.ts";
import { TaskTimeouts } from "./task-timeouts.ts";

export type { QueueTask, TaskControl } from "./queue-lines.ts";
export { endAfter, isThenable, RUNS_ON } from "./queue-lines.ts";

/** A task a stop left running (see {@link ConversationQueue.abortedEnded}): its key, arg and function. */
export interface LeftTask {
  key: string;
  arg: unknown;
  run: QueueTask<unknown>;
}

export interface ConversationQueueOptions {
  /** Tasks running at once (across all keys). */
  concurrency: number;
  /** Abort a task's signal and move on after this many ms. */
  handlerTimeoutMs: number;
  /** Where errors (at error level, with the key) and timeouts are logged; default nowhere. */
  log?: Logger;
  /** Time source for timeouts. */
  clock: Clock;
}

/** @example queue.push(keys.keyOf(event), (c) => run(event, c.signal)); await queue.onIdle(); */
export class ConversationQueue {
  readonly #concurrency: number;
  readonly #timeoutMs: number;
  readonly #log: Logger;
  // The maps are made on first use: a daemon holds a queue per bot, idle ones included.
  #lines: Map<string, Line> | undefined;
  /** Keys whose next task may start, oldest first. */
  #ready: Fifo<Line> | undefined;
  readonly #running = new RunningTasks();
  readonly #timeouts: TaskTimeouts;
  /** Tasks done but holding their key, released together per promise. */
  readonly #held = new HeldTasks((tasks) => {
    for (const t of tasks) this.#release(t);
    this.#pump();
  });
  /** Tasks running or held. */
  #active = 0;
  #waiting = 0;
  #pumping = false;
  /** The task running inside push() (see `#runNow`), if any. */
  #inline: Task | undefined;
  readonly #waiters = new InFlightWaiters();
  /** The tasks running when {@link abortAll} last aborted them, until {@link abortedEnded}. */
  #aborted: Task[] = [];
  /** Tasks the timeout cut whose runs go on. */
  readonly #overruns = new OverrunTasks();

  constructor(options: ConversationQueueOptions) {
    this.#concurrency = positiveInt(options.concurrency, "concurrency");
    this.#timeoutMs = positiveInt(options.handlerTimeoutMs, "handlerTimeoutMs");
    this.#log = options.log ?? silentLogger;
    this.#timeouts = new TaskTimeouts(options.clock, this.#timeoutMs, this.#running, (task) =>
      this.#expire(task),
    );
  }

  /** Tasks accepted and not finished: waiting plus running (and held). */
  get inFlight(): number {
    return this.#waiting + this.#active;
  }

  /**
   * Queue `task` behind earlier tasks of `key`, with `arg` handed to it (so one task function
   * serves every push). `onDone` is called once it finished (or was dropped by abortAll).
   */
  push<A = undefined>(key: string, task: QueueTask<A>, arg?: A, onDone?: () => void): void {
    this.#lines ??= new Map();
    const lines = this.#lines;
    let line = lines.get(key);
    if (line === undefined) {
      // An idle key with a slot free: the task runs now, and gets a line only if it outlives the call.
      if (!this.#pumping && this.#runningCount() < this.#concurrency) {
        this.#runNow(new Task(key, task as QueueTask<unknown>, arg, onDone));
        return;
      }
      line = this.#newLine(key);
    }
    line.add(task as QueueTask<unknown>, arg, onDone);
    this.#waiting++;
    if (line.current === undefined && line.waiting === 1) this.#makeReady(line);
    this.#pump();
  }

  /** Tasks running now (held ones give their slot back). */
  #runningCount(): number {
    return this.#running.size + (this.#inline === undefined ? 0 : 1);
  }

  /** A line for `key`; the task running inline on that key, if any, is its current one. */
  #newLine(key: string): Line {
    const line = new Line(key);
    const inline = this.#inline;
    if (inline !== undefined && inline.key === key) line.current = inline;
    this.#lines?.set(key, line);
    return line;
  }

  /**
   * Run a task of an idle key inside push(). What it pushes meanwhile waits (no nesting); a task
   * of its own key waits behind it. One that returns a promise or holds its key is then tracked
   * as any running task, its key's line made with it at the head.
   */
  #runNow(task: Task): void {
    task.onWait = this.#timeouts.onWait;
    task.onEnd = this.#onEnd;
    this.#active++;
    this.#pumping = true;
    this.#inline = task;
    let result: unknown;
    let threw = false;
    try {
      result = task.run(task, task.arg);
    } catch (error) {
      threw = true;
      this.#report(error, task.key);
    } finally {
      this.#inline = undefined;
      this.#pumping = false;
    }
    if (!threw && (task.hold !== undefined || result === RUNS_ON || isThenable(result))) {
      // The line a same-key push made during the run already has the task as its current one.
      (this.#lines?.get(task.key) ?? this.#newLine(task.key)).current = task;
      this.#running.add(task);
      this.#after(task, result);
    } else this.#finish(task);
    this.#pump();
  }

  /** Resolves once fewer than `limit` tasks are in flight (at once if already so). */
  onBelow(limit: number, signal?: AbortSignal): Promise<void> {
    positiveInt(limit, "onBelow limit");
    return this.#waiters.wait(this.inFlight, limit, signal);
  }

  /** Resolves once nothing is waiting or running. */
  onIdle(signal?: AbortSignal): Promise<void> {
    return this.onBelow(1, signal);
  }

  /**
   * After {@link abortAll}: resolves once the tasks it aborted ended, what they keep as they end (a
   * dead letter, their message's mark) written while the store is open; or once `grace` aborts, with
   * the tasks still running then (deaf to their signal, or slow to settle): their keys and args. A
   * task that ended and holds its key while its end is written is waited for past `grace`; one held
   * before the abort (a write retried through an outage) is not: its own abort stops it; one held
   * in a later attempt of its run (`attempting`) is waited for as a running one. So are the runs
   * the handler timeout cut that go on (overrun-tasks.ts), aborted by then. The tasks returned are
   * marked `left`.
   */
  async abortedEnded(grace: AbortSignal): Promise<LeftTask[]> {
    const aborted = [...this.#aborted, ...this.#overruns.list()];
    this.#aborted = [];
    await nextTurn();
    const waited = (t: Task) => t.writesEnd || (t.stillRuns && !grace.aborted);
    // A wait ends as a task ends, or as the grace passes (then only the held ones are waited for).
    while (aborted.some(waited)) await this.#nextEnd(grace);
    const left = aborted.filter((t) => t.stillRuns);
    for (const task of left) task.left = true;
    return left.map((t) => ({ key: t.key, arg: t.arg, run: t.run }));
  }

  /** Resolves as a task ends or settles its holds, a run the timeout cut included, or as `grace` passes. */
  #nextEnd(grace: AbortSignal): Promise<void> {
    const overrun = this.#overruns.changed(grace);
    if (this.inFlight === 0) return overrun;
    const below = this.onBelow(this.inFlight, grace.aborted ? undefined : grace).catch(() => {});
    return Promise.race([below, overrun]);
  }

  /**
   * Shutdown past its deadline: abort every running or held task's signal with `ROUTER_ABORTED` and drop
   * every waiting task (its `onDone` is called). Returns how many tasks were dropped.
   */
  abortAll(reason: unknown = new RouterError("ROUTER_ABORTED", "The bot is shutting down.")): number {
    const dropped: [string, (() => void) | undefined][] = [];
    const attempting: Task[] = [];
    const lines = this.#lines;
    for (const [key, line] of lines ?? []) {
      // A held task's work (a write retried through a store outage) stops at the deadline too.
      if (line.current?.state === "held") {
        line.current.abort(reason);
        if (line.current.attempting) attempting.push(line.current);
      }
      for (const onDone of line.dropWaiting()) dropped.push([key, onDone]);
      if (line.current === undefined) lines?.delete(key);
    }
    this.#ready = undefined;
    this.#waiting = 0;
    this.#aborted = this.#running.list();
    for (const task of this.#aborted) task.abort(reason);
    this.#aborted.push(...attempting);
    this.#inline?.abort(reason);
    for (const [key, onDone] of dropped) this.#callDone(onDone, key);
    if (this.#active === 0) this.#timeouts.disarm();
    this.#settleWaiters();
    return dropped.length;
  }

  /** Start ready tasks while slots are free. Iterative, and a no-op when nested in itself. */
  #pump(): void {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      for (;;) {
        const ready = this.#ready;
        if (ready === undefined || ready.size === 0 || this.#runningCount() >= this.#concurrency) break;
        const line = ready.shift();
        this.#waiting--;
        this.#start(line.next());
      }
    } finally {
      this.#pumping = false;
    }
  }

  #start(task: Task): void {
    task.onWait = this.#timeouts.onWait;
    task.onEnd = this.#onEnd;
    this.#running.add(task);
    this.#active++;
    let result: unknown;
    try {
      result = task.run(task, task.arg);
    } catch (error) {
      this.#report(error, task.key);
      this.#finish(task);
      return;
    }
    this.#after(task, result);
  }

  /**
   * The task returned `result`: a promise, or RUNS_ON, runs until it settles (a promise of RUNS_ON:
   * until `end()`) or its timeout passes; anything else is done.
   */
  #after(task: Task, result: unknown): void {
    if (result === RUNS_ON) this.#timeOut(task);
    else if (isThenable(result)) this.#await(task, result);
    else this.#finish(task);
  }

  /** A task that runs on: its timeout is armed, unless it ended before its call returned (see `#onEnd`). */
  #timeOut(task: Task): void {
    if (task.endedEarly) {
      this.#finish(task);
      return;
    }
    this.#timeouts.start(task);
  }

  #await(task: Task, result: PromiseLike<unknown>): void {
    this.#timeOut(task);
    try {
      result.then(
        (value) => {
          if (value !== RUNS_ON) this.#finish(task);
        },
        (error: unknown) => {
          if (task.state === "running") this.#report(error, task.key);
          else if (task.timedOut)
            this.#log.warn({ err: error, conversation: task.key }, "handler failed after it had timed out");
          this.#finish(task);
        },
      );
    } catch (error) {
      this.#report(error, task.key); // a thenable whose then() throws
      this.#finish(task);
    }
  }

  /** The task ended before its promise settled (`TaskControl.end`): finished now, or once its call returned. */
  readonly #onEnd = (task: Task): void => {
    task.endedEarly = true;
    if (task.dueAt !== 0) this.#finish(task);
  };

  #expire(task: Task): void {
    task.hold = undefined;
    task.timedOut = true;
    task.abort(handlerTimedOut(this.#timeoutMs, task.key));
    // Named as each later attempt's line is (handler-failures.ts): its event, the attempt.
    const fields = {
      conversation: task.key,
      ...taskFields(task.arg),
      ...handlerOf(task.running),
      timeoutMs: this.#timeoutMs,
    };
    this.#log.warn(fields, "handler timed out; its signal was aborted and the queue moved on");
    this.#finish(task);
    if (!task.endedEarly) this.#overruns.add(task);
  }

  /** The task returned, settled or timed out: free its slot, and its key unless it holds it. */
  #finish(task: Task): void {
    if (task.state !== "running") {
      this.#overruns.ended(task);
      return;
    }
    this.#running.delete(task);
    const hold = task.hold;
    if (hold === undefined) this.#release(task);
    else {
      task.state = "held";
      this.#held.add(hold, task);
    }
    this.#pump();
  }

  /** The task is done: its key's next task (if any) becomes ready; its `resume` first, if any. */
  #release(task: Task): void {
    task.state = "done";
    this.#active--;
    const line = this.#lines?.get(task.key);
    if (task.resume !== undefined && line !== undefined && !task.signal.aborted) {
      line.current = undefined;
      line.addFirst(task.resume, task.arg, task.onDone);
      this.#waiting++;
      this.#makeReady(line);
      return;
    }
    if (line !== undefined) {
      line.current = undefined;
      if (line.waiting > 0) this.#makeReady(line);
      else this.#lines?.delete(task.key);
    }
    this.#callDone(task.onDone, task.key);
    if (this.#active === 0 && this.#waiting === 0) this.#timeouts.disarm();
    this.#settleWaiters();
  }

  #makeReady(line: Line): void {
    this.#ready ??= new Fifo();
    this.#ready.items.push(line);
  }

  #settleWaiters(): void {
    this.#waiters.settle(this.inFlight);
  }

  #callDone(onDone: (() => void) | undefined, key: string): void {
    if (onDone === undefined) return;
    try {
      onDone();
    } catch (err) {
      this.#log.error({ err, conversation: key }, "a queue task's onDone threw");
    }
  }

  #report(err: unknown, key: string): void {
    this.#log.error({ err, conversation: key }, "handler failed");
  }
}
