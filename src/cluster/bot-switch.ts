/**
 * Starts and stops one bot's runtime as its lease comes and goes. Transitions run one after
 * another, except that a halt never waits for a start in progress (a start can wait on a server
 * for a long time): it stops the runtime at once, and the start gives up.
 */

export { LEASE_STOP } from "../pipeline/stop-cut.ts";

import { RELOAD_REMOVE, RELOAD_RESTART } from "../pipeline/stop-cut.ts";

/**
 * The one line (warn) of a lease lost here, said once the bot stopped, with `left`: the events it
 * left in flight (each one's own lines of the stop are at debug). `holder`: the instance that holds
 * the lease now, as `bothost status` names it; none when no instance does.
 */
export function leaseLostLine(holder: string | undefined): string {
  return holder !== undefined
    ? `lease lost: the bot stopped here; instance ${holder} runs it and takes over the events left in flight`
    : "lease lost: the bot stopped here until its lease is taken again (here or on another instance), by the instance that takes over the events left in flight";
}

/** The part of a BotRuntime a switch drives. */
export interface Switchable {
  readonly name: string;
  /** True while this instance does not run the bot (another instance may). */
  standby: boolean;
  start(): Promise<void>;
  stop(deadlineMs: number, stop?: string): Promise<{ abandoned: number }>;
}

export class BotSwitch {
  readonly #runtime: Switchable;
  #chain: Promise<unknown> = Promise.resolve();
  #generation = 0;
  /** Halted (or never started): the runtime does not run the bot here. */
  #halted = true;
  /** The start under way or done since the last halt (none after it failed). */
  #started: Promise<"started" | "halted"> | undefined;
  /** Replaced by a new runtime (a reload): it never starts again. */
  #retired = false;

  constructor(runtime: Switchable) {
    this.#runtime = runtime;
  }

  /**
   * Start the runtime once any stop in progress has finished. Resolves `"halted"` when a halt
   * came before or during the start; rejects with the start's own error otherwise. A start while
   * one is under way or done (a reload and a lease round both starting a bot won meanwhile) is
   * that one: a runtime started twice would register a second event queue.
   */
  start(): Promise<"started" | "halted"> {
    if (this.#retired) return Promise.resolve("halted");
    if (!this.#halted && this.#started) return this.#started;
    const generation = ++this.#generation;
    this.#halted = false;
    const run = this.#chain.then(async () => {
      if (generation !== this.#generation) return "halted" as const;
      this.#runtime.standby = false;
      try {
        await this.#runtime.start();
      } catch (err) {
        if (generation !== this.#generation) return "halted" as const;
        throw err;
      }
      return generation === this.#generation ? ("started" as const) : ("halted" as const);
    });
    this.#chain = run.catch(() => {
      if (this.#started === run) this.#started = undefined;
    });
    this.#started = run;
    return run;
  }

  /**
   * Stop the runtime now, handlers aborted after `deadlineMs`; the next start waits for this.
   * `elsewhere`: another instance runs the bot (the runtime is then a spare: `standby`). `stop`:
   * why the bot stops alone, said with handlers aborted at the deadline; none in a shutdown.
   */
  async halt(deadlineMs: number, elsewhere = true, stop?: string): Promise<{ abandoned: number }> {
    const generation = ++this.#generation;
    this.#halted = true;
    this.#started = undefined;
    const stopped = this.#runtime.stop(deadlineMs, stop);
    const previous = this.#chain;
    this.#chain = Promise.allSettled([previous, stopped]);
    try {
      return await stopped;
    } finally {
      if (generation === this.#generation) this.#runtime.standby = elsewhere;
    }
  }

  /**
   * Halt for good: a reload replaces the runtime. A start asked meanwhile (a lease round winning
   * the bot while the old runtime stops) starts nothing: the reload starts the new runtime. It
   * stays `standby` only if it was (another instance runs the bot): one that ran here is not a spare.
   */
  retire(deadlineMs: number, removed: boolean): Promise<{ abandoned: number }> {
    this.#retired = true;
    return this.halt(deadlineMs, this.#runtime.standby, removed ? RELOAD_REMOVE : RELOAD_RESTART);
  }

  /** Another instance holds the bot: stopped here, the runtime is its spare. */
  spare(): void {
    if (this.#halted) this.#runtime.standby = true;
  }
}
