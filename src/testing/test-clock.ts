/**
 * A clock a test moves forward: the sandbox's time and the bots' schedulers read it, so a reminder
 * booked for "in 5 minutes" is delivered by `await clock.advance(6 * 60_000)` instead of a wait.
 * Between advances it runs at the real pace, or (`held`) stands still.
 */
import { type Clock, MAX_TIMER_DELAY_MS, type TimerHandle } from "../time/clock.ts";
import { checkAdvance, kitError, shown } from "./kit-arguments.ts";
import { withoutKitFrames } from "./kit-frames.ts";

interface Timer {
  dueAt: number;
  fn: () => void;
  real: ReturnType<typeof setTimeout> | undefined;
}

/** Let the async work a fired timer started reach its next wait (a few macrotask turns). */
async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** What {@link TestClock.onAdvance} calls. */
type Listener = () => void | Promise<void>;

export interface TestClockOptions {
  /** Where time starts: an ISO 8601 date, a Date or epoch ms. Default: now. */
  start?: string | Date | number;
  /**
   * Time stands still between advances: a timer (a `handler_timeout`, a retry's pause) fires where
   * the test moves the clock, never because the machine was slow. A timer due now still fires on
   * the next turn of the event loop. Default false (the real pace between advances).
   */
  held?: boolean;
}

/**
 * The real time (or, held, the time it was made) plus an offset that {@link TestClock.advance}
 * grows. Pass it to `startSandbox({ clock })` and `runBot(sandbox, { clock })` (the vitest fixture
 * does both).
 * Handlers see it as `ctx.now()`; a bot that reads `Date.now()` itself sees the machine's time,
 * not the offset.
 */
export class TestClock implements Clock {
  /** Whether time stands still between advances (see {@link TestClockOptions.held}). */
  readonly held: boolean;
  // now() is the real time plus #offset, or (held) the time at construction plus #offset.
  readonly #origin = Date.now();
  #offset: number;
  readonly #timers = new Set<Timer>();
  /** Called after every advance, and at each time its `wakeAt` names on the way (see {@link onAdvance}). */
  readonly #listeners = new Map<Listener, (() => number | undefined) | undefined>();
  /** Awaited after each timer an advance fires (see {@link afterEachTimer}). */
  readonly #workDone = new Set<() => Promise<void>>();

  constructor(options: TestClockOptions = {}) {
    const start = options.start === undefined ? Date.now() : new Date(options.start).getTime();
    if (Number.isNaN(start))
      throw kitError(
        `clock start: not a date: ${String(options.start)} (give an ISO 8601 time, a Date or epoch ms)`,
      );
    // A truthy string ("false" included) would hold the clock: only a boolean says which.
    if (options.held !== undefined && typeof options.held !== "boolean")
      throw kitError(`clock held: must be true or false, got ${shown(options.held)}`);
    this.held = options.held ?? false;
    this.#offset = start - this.#origin;
  }

  now(): number {
    return (this.held ? this.#origin : Date.now()) + this.#offset;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: Timer = { dueAt: this.now() + Math.max(0, ms), fn, real: undefined };
    this.#timers.add(timer);
    this.#arm(timer);
    return timer as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle): void {
    const timer = handle as unknown as Timer;
    if (timer.real !== undefined) clearTimeout(timer.real);
    this.#timers.delete(timer);
  }

  /**
   * Move time forward by `ms`: fire the bots' timers that come due, and let the sandbox deliver
   * each scheduled message at its minute, in time order (letting the work each starts run), as
   * if the time had passed: a long advance leaves no message more than 10 minutes late. The server
   * sends a scheduled message at the first whole minute after its time: advance past it.
   */
  async advance(ms: number): Promise<void> {
    try {
      checkAdvance(ms);
    } catch (err) {
      throw withoutKitFrames(err);
    }
    const target = this.now() + ms;
    await settle();
    for (;;) {
      const next = this.#earliest();
      const timerAt = next !== undefined && next.dueAt <= target ? next.dueAt : undefined;
      const wake = this.#nextWake(target);
      if (timerAt === undefined && wake === undefined) break;
      // A wake at a timer's very time goes first: once a timer moved the clock there, the wake
      // (a scheduled message's minute) would no longer be after now and would be passed by.
      if (next !== undefined && timerAt !== undefined && (wake === undefined || timerAt < wake.at)) {
        this.#offset += Math.max(0, timerAt - this.now());
        this.#fire(next);
        for (const done of [...this.#workDone]) await done();
      } else if (wake !== undefined) {
        this.#offset += wake.at - this.now();
        await wake.listener();
      }
      await settle();
    }
    this.#offset += Math.max(0, target - this.now());
    for (const timer of this.#timers) this.#arm(timer);
    for (const listener of [...this.#listeners.keys()]) await listener();
    await settle();
  }

  /** The earliest time after now, up to `target`, that a listener asked to be called at. */
  #nextWake(target: number): { at: number; listener: Listener } | undefined {
    let first: { at: number; listener: Listener } | undefined;
    const now = this.now();
    for (const [listener, wakeAt] of this.#listeners) {
      const at = wakeAt?.();
      if (at !== undefined && at > now && at <= target && (first === undefined || at < first.at))
        first = { at, listener };
    }
    return first;
  }

  /** Move time forward to `at` (ISO 8601, Date or epoch ms); a time already past moves nothing. */
  async advanceTo(at: string | Date | number): Promise<void> {
    const target = new Date(at).getTime();
    if (Number.isNaN(target))
      throw withoutKitFrames(
        kitError(`advanceTo: not a date: ${String(at)} (give an ISO 8601 time, a Date or epoch ms)`),
      );
    return this.advance(Math.max(0, target - this.now()));
  }

  /**
   * How long each pending timer has left, in ms, in the order they were set: on a held clock, wait
   * for the timer a case is about to pass (`expect.poll(() => clock.pendingDelays()).toContain(5_000)`)
   * before advancing past it.
   */
  pendingDelays(): number[] {
    return [...this.#timers].map((t) => t.dueAt - this.now());
  }

  /**
   * Call `listener` after every advance (the sandbox delivering what is due), and during one at
   * each time `wakeAt` names (the next scheduled message's minute); the advance waits for the
   * promise it returns (the bot taking in what was sent). Returns the undo.
   */
  onAdvance(listener: Listener, wakeAt?: () => number | undefined): () => void {
    this.#listeners.set(listener, wakeAt);
    return () => this.#listeners.delete(listener);
  }

  /**
   * During an advance, after each timer it fires, wait for `done()` (the work the timer began, a
   * cron job's run) before going on, as the time would have let it end; returns the undo.
   */
  afterEachTimer(done: () => Promise<void>): () => void {
    this.#workDone.add(done);
    return () => this.#workDone.delete(done);
  }

  #arm(timer: Timer): void {
    if (timer.real !== undefined) clearTimeout(timer.real);
    if (this.held) {
      // Only a timer due now runs without an advance, on the next turn as a real one would.
      if (timer.dueAt <= this.now()) setImmediate(() => this.#fire(timer));
      return;
    }
    const wait = Math.min(Math.max(0, timer.dueAt - this.now()), MAX_TIMER_DELAY_MS);
    timer.real = setTimeout(() => (this.now() >= timer.dueAt ? this.#fire(timer) : this.#arm(timer)), wait);
  }

  #fire(timer: Timer): void {
    if (timer.real !== undefined) clearTimeout(timer.real);
    if (!this.#timers.delete(timer)) return;
    timer.fn();
  }

  #earliest(): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.#timers) if (best === undefined || t.dueAt < best.dueAt) best = t;
    return best;
  }
}
