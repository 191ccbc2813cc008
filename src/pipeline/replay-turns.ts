/**
 * The turns of a bot's dead letters' replays (events/dead-letter-source.ts): one attempt of a
 * replayed letter under way at a time per bot, so a bulk retry stays a trickle beside the live
 * traffic. A letter holds the turn through each attempt, not through the pause before its next
 * one: while it waits for that attempt, the next letter's replay goes on, and its next attempt
 * then waits for the attempt under way. Turns are given in the order they were asked for.
 */

/** What a replayed letter's failure stage sees of its turns (handler-failures.ts). */
export interface AttemptTurns {
  /** The attempt that held the turn failed and the letter pauses before its next: the turn goes. */
  paused(): void;
  /**
   * `fn` run holding the turn (a later attempt); rejects with `signal`'s reason, `fn` not run,
   * should `signal` abort while it waits for the turn.
   */
  during<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T>;
}

interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
}

/** One turn, given in order: the bot's (see the file's comment). */
export class ReplayTurns {
  #held = false;
  readonly #waiting: Waiter[] = [];

  /** Take the turn: undefined when taken at once, else resolved once taken (rejected on `signal`'s abort). */
  take(signal?: AbortSignal): Promise<void> | undefined {
    if (!this.#held) {
      this.#held = true;
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        reject,
      };
      const onAbort = () => {
        const at = this.#waiting.indexOf(waiter);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal?.reason);
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  /** Give the turn back: the next waiting takes it. */
  give(): void {
    const next = this.#waiting.shift();
    if (next) next.resolve();
    else this.#held = false;
  }

  /** `fn` run holding the turn. */
  async during<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    await this.take(signal);
    try {
      return await fn();
    } finally {
      this.give();
    }
  }
}

/**
 * One replayed letter's turns: its first attempt's, taken as its run begins ({@link first}) and
 * given at its first pause or its end, then one for each later attempt. `yielded` resolves at the
 * letter's first pause or its end, whichever comes first: the next letter may then be replayed.
 */
export class LetterTurns implements AttemptTurns {
  readonly yielded: Promise<void>;
  #yield!: () => void;
  #holds = false;
  #over = false;

  constructor(readonly turns: ReplayTurns) {
    this.yielded = new Promise((resolve) => {
      this.#yield = resolve;
    });
  }

  /** The first attempt takes the turn: undefined when taken at once, else resolved once taken. */
  first(): Promise<void> | undefined {
    const wait = this.turns.take();
    if (wait === undefined) {
      this.#holds = true;
      return undefined;
    }
    return wait.then(() => {
      this.#holds = true;
      // Over before its turn came (the bot stopped): the turn goes at once.
      if (this.#over) this.#give();
    });
  }

  paused(): void {
    this.#give();
    this.#yield();
  }

  during<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    return this.turns.during(signal, fn);
  }

  /** The letter's replay is over (handled, kept again, or left to the next start). */
  over(): void {
    this.#over = true;
    this.paused();
  }

  #give(): void {
    if (!this.#holds) return;
    this.#holds = false;
    this.turns.give();
  }
}
