/**
 * The dead-letter source: replays the letters an operator marked (`bothost failed retry`) through
 * the bot's pipeline, in order with their conversations. It looks at start, then whenever the
 * daemon tells it that a retry of this bot's letters was requested ({@link RetryRequests}); it
 * keeps no timer of its own, so an idle bot costs nothing here.
 *
 * The letters are replayed one at a time ({@link REPLAYS_AT_ONCE}): a bulk retry handed over at
 * once would queue hundreds of runs and their calls beside the live bot's. One attempt of a
 * letter is under way at a time (pipeline/replay-turns.ts): a letter failing again holds the next
 * through each of its attempts, not through the pauses between them, so one whose cause is not
 * fixed yet does not hold every other letter of the bot for its whole retry schedule.
 */
import type { Logger } from "pino";
import type { Dispatcher } from "../pipeline/dispatcher.ts";
import { LetterTurns, ReplayTurns } from "../pipeline/replay-turns.ts";
import type { DeadLetter, DeadLetters } from "../state/dead-letters.ts";

/** Logged (debug) at each look that finds a letter kept while its delivery's run goes on in this daemon. */
export const RUNNING_HERE_LINE =
  "a dead letter whose delivery still runs here is left to that run, which removes it once over";

/** Where a running bot hears of retry requests: one watcher for every bot of a daemon. */
export interface RetryRequests {
  /**
   * Call `look` whenever the bot's retry generation moves past `generation` (the one the bot
   * has acted on). Returns what stops the calls.
   */
  watch(bot: string, generation: number, look: () => void): () => void;
}

export interface DeadLetterSourceOptions {
  letters: DeadLetters;
  dispatcher: Dispatcher;
  /**
   * Runs a cron job's letter again (its job, not the pipeline's event stages, replays it), its
   * attempts in `turns` as an event letter's are.
   */
  replayJob(letter: DeadLetter, turns: LetterTurns): Promise<boolean>;
  log: Logger;
  signal: AbortSignal;
  /** Tells of later requests; without it the source looks only at start. */
  requests?: RetryRequests;
  /**
   * This daemon's id: a letter kept while its run still goes here (`runningIn`) is left to that
   * run, which removes it once over; replaying it now would run the delivery twice.
   */
  daemonId?: string;
}

/** Letters of one bot handed over at the same time (each until its first pause or its end). */
export const REPLAYS_AT_ONCE = 1;

export class DeadLetterSource {
  readonly #o: DeadLetterSourceOptions;
  /**
   * Letters being replayed now: a later look must not hand them over twice. Made by the first
   * retry: most bots never have one.
   */
  #inFlight: Set<string> | undefined;
  /** A look is running; `#again`: another was asked for meanwhile. */
  #looking: Promise<void> | undefined;
  #again = false;
  /** Letters handed over by a look, waiting for their turn to be replayed, oldest first. */
  readonly #waiting: DeadLetter[] = [];
  #replaying = 0;
  /** One attempt of a replayed letter at a time (replay-turns.ts). */
  readonly #turns = new ReplayTurns();

  constructor(options: DeadLetterSourceOptions) {
    this.#o = options;
  }

  /** Replay what is marked now, then replay each later request until the signal aborts. */
  async start(): Promise<void> {
    const { letters, requests, signal, log } = this.#o;
    // Read before looking: a request made during the look moves the generation past this one.
    const generation = await letters.retryGeneration().catch((err: unknown) => {
      log.warn({ err }, "could not read the dead letters' retry generation");
      return -1;
    });
    await this.look();
    if (!requests || signal.aborted) return;
    const unwatch = requests.watch(letters.bot, generation, () => void this.look());
    signal.addEventListener("abort", unwatch, { once: true });
  }

  /** Replay the letters marked for retry; a call during a look runs one more look after it. */
  look(): Promise<void> {
    if (this.#looking) {
      this.#again = true;
      return this.#looking;
    }
    this.#looking = (async () => {
      do {
        this.#again = false;
        await this.#lookOnce();
      } while (this.#again && !this.#o.signal.aborted);
      this.#looking = undefined;
    })();
    return this.#looking;
  }

  async #lookOnce(): Promise<void> {
    const { letters, log, signal } = this.#o;
    if (signal.aborted) return;
    try {
      for (const letter of await letters.retryRequested()) {
        // Its run still goes in this daemon, which removes the letter once over.
        if (letter.runningIn !== undefined && letter.runningIn === this.#o.daemonId) {
          log.debug({ deadLetter: letter.id }, RUNNING_HERE_LINE);
          continue;
        }
        this.#inFlight ??= new Set();
        const inFlight = this.#inFlight;
        if (signal.aborted || inFlight.has(letter.id)) continue;
        inFlight.add(letter.id);
        this.#waiting.push(letter);
      }
      this.#next();
    } catch (err) {
      log.warn({ err }, "could not read the dead letters' retry requests; the next request looks again");
    }
  }

  /**
   * Replay `letter` if it is still marked when its turn comes (an operator may have dropped it
   * meanwhile); a store that fails the read: replayed. `turns`: its attempts' (replay-turns.ts).
   */
  async #replay(letter: DeadLetter, turns: LetterTurns): Promise<void> {
    const { letters, dispatcher, log } = this.#o;
    try {
      const now = await letters.get(letter.id).catch(() => letter);
      if (now === undefined || now.retryRequestedAt === undefined) return;
      log.info({ deadLetter: letter.id }, "replaying a dead letter");
      // A job's occurrence; a dialog a job started is kept as its own run, a dialog's.
      const job = letter.source === "job" && letter.dialog === undefined;
      const replay = job ? this.#o.replayJob(letter, turns) : dispatcher.replay(letter, turns);
      if (await replay.catch(() => false))
        log.info({ deadLetter: letter.id }, "dead letter handled; removed from the list");
    } finally {
      turns.over();
    }
  }

  /**
   * Replay waiting letters while fewer than {@link REPLAYS_AT_ONCE} are handed over and not yet
   * paused (a letter in its pauses stays in flight, and a later look leaves it to its replay).
   */
  #next(): void {
    const { signal } = this.#o;
    while (this.#replaying < REPLAYS_AT_ONCE && !signal.aborted) {
      const letter = this.#waiting.shift();
      if (letter === undefined) return;
      this.#replaying++;
      const turns = new LetterTurns(this.#turns);
      const replayed = this.#replay(letter, turns);
      void turns.yielded.then(() => {
        this.#replaying--;
        this.#next();
      });
      void replayed.then(() => this.#inFlight?.delete(letter.id));
    }
  }
}
