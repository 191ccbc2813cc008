/**
 * The dead-letter source: replays the letters an operator marked (`bothost failed retry`) through
 * the bot's pipeline, in order with their conversations. It looks at start, then every few
 * seconds reads one number (the letters' retry generation) and looks again when it changed.
 */
import type { Logger } from "pino";
import type { Dispatcher } from "../pipeline/dispatcher.ts";
import type { DeadLetter, DeadLetters } from "../state/dead-letters.ts";
import type { Clock, TimerHandle } from "../time/clock.ts";

/** How often a running bot checks for retry requests. */
export const RETRY_CHECK_MS = 2_000;

export interface DeadLetterSourceOptions {
  letters: DeadLetters;
  dispatcher: Dispatcher;
  /** Runs a cron job's letter again (its job, not the pipeline's event stages, replays it). */
  replayJob(letter: DeadLetter): Promise<boolean>;
  log: Logger;
  /** What the checks are timed on. */
  clock: Clock;
  signal: AbortSignal;
}

export class DeadLetterSource {
  readonly #o: DeadLetterSourceOptions;
  /** Letters being replayed now: a later check must not hand them over twice. */
  readonly #inFlight = new Set<string>();
  #generation = -1;
  #timer: TimerHandle | undefined;

  constructor(options: DeadLetterSourceOptions) {
    this.#o = options;
  }

  /** Replay what is marked now, then keep checking until the signal aborts. */
  async start(): Promise<void> {
    await this.#check();
    this.#o.signal.addEventListener(
      "abort",
      () => {
        if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
      },
      { once: true },
    );
    this.#schedule();
  }

  #schedule(): void {
    if (this.#o.signal.aborted) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#check().finally(() => this.#schedule());
    }, RETRY_CHECK_MS);
  }

  async #check(): Promise<void> {
    const { letters, dispatcher, log } = this.#o;
    try {
      const generation = await letters.retryGeneration();
      if (generation === this.#generation) return;
      this.#generation = generation;
      for (const letter of await letters.retryRequested()) {
        if (this.#o.signal.aborted || this.#inFlight.has(letter.id)) continue;
        this.#inFlight.add(letter.id);
        log.info({ deadLetter: letter.id }, "replaying a dead letter");
        const replayed = letter.source === "job" ? this.#o.replayJob(letter) : dispatcher.replay(letter);
        void replayed.then((handled) => {
          this.#inFlight.delete(letter.id);
          if (handled) log.info({ deadLetter: letter.id }, "dead letter handled; removed from the list");
        });
      }
    } catch (err) {
      log.warn({ err }, "could not read the dead letters' retry requests; trying again shortly");
    }
  }
}
