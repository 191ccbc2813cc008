/**
 * The answer to each outgoing-webhook delivery: a reply made before the deadline goes in the HTTP
 * response (the server posts it); later ones go through the API. A delivery the server repeats (it
 * retries on timeouts and connection errors) shares the first one's answer, so its handlers run once.
 *
 * The server never sends an answered delivery again, so one answered while its handler still runs
 * is kept first ({@link Keeper}: a dead letter written and flushed); once the run is over its
 * letter goes. That is a delivery whose deadline passes meanwhile (answered without a reply), and
 * one whose handler replies before it returns (answered with the reply once kept). A kill
 * (`kill -9`, a crash) between the answer and the end of the run loses nothing: the next start
 * replays the letter. One whose letter the store refuses at its deadline is not answered
 * (`refused`: its connection is closed, so that the server retries it); a retry is answered in its
 * own time, kept (or refused) in its turn while the run still goes, without a reply once it is
 * over. A reply whose letter the store refuses is given all the same (the server posts it), the
 * rest of its run then unkept. A delivery answered before its run begins (a Slack-format one found
 * by a later lookup) is kept before it runs. A write reported failed may have landed all the same
 * (its acknowledgement lost): the run's end then looks for its letter and removes it.
 */
import type { ReplyFn } from "../pipeline/incoming.ts";
import type { Clock } from "../time/clock.ts";

/** A reply for the response body; nothing to post; or (`refused`) no answer, the connection closed. */
export type Answer = { content: string; refused?: undefined } | { content?: undefined; refused?: true };

/**
 * Why a delivery is kept while its handler runs: its deadline passed; its handler replied (the
 * reply is its answer); it asks a dialog's question before its answer; it was answered before its
 * run began (a Slack-format one found later).
 */
export type KeptWhy = "deadline" | "replied" | "asked" | "answered";

/** How a delivery answered while its handler runs is kept, and let go of. */
export interface Keeper {
  /**
   * Keep the delivery: resolves its letter's id once written and flushed, undefined when the bot
   * keeps no letters; rejects when the store refused it. `again`: an earlier keep of it failed.
   */
  keep(again: boolean, why: KeptWhy): Promise<string | undefined>;
  /**
   * The run is over: letter `id` goes; with `id` undefined (a write of it was reported failed,
   * and may have landed), any letter of this delivery marked as this daemon's run.
   */
  settle(id: string | undefined): void;
}

/** How long answers are kept for repeats: the server retries within a minute. */
const KEEP_ANSWERS_MS = 600_000;

/** One delivery, its repeats included. */
interface Exchange {
  /** The answer a repeat shares (unless it was `refused`). */
  answer: Promise<Answer>;
  expires: number;
  running: boolean;
  /** Resolves once the run is over. */
  over: Promise<void>;
  keeper: Keeper | undefined;
  /** Its letter, once a keep began. */
  letter?: Promise<string | undefined>;
  /** A keep failed: the next one looks for a letter that landed all the same. */
  unkept?: true;
  /** A keep's write was reported failed (at the deadline or at a reply): it may have landed. */
  unsure?: true;
}

/** An answer given once: by a reply, the run's end, or the deadline, whichever comes first. */
class Pending {
  readonly answer: Promise<Answer>;
  /** Its delivery's keep, once begun: the reply's and the deadline's share it. */
  keeping: Promise<string | undefined> | undefined;
  #settle!: (a: Answer) => void;
  #open = true;

  constructor() {
    this.answer = new Promise<Answer>((resolve) => {
      this.#settle = resolve;
    });
  }

  get open(): boolean {
    return this.#open;
  }

  /** Gives `a`, if nothing was given yet; whether it was. */
  give(a: Answer): boolean {
    if (!this.#open) return false;
    this.#open = false;
    this.#settle(a);
    return true;
  }
}

export class ReplyExchange {
  readonly #answers = new Map<string, Exchange>();

  readonly #clock: Clock;

  /** `deadlineMs`: answer the server within this time. */
  constructor(
    readonly deadlineMs: () => number,
    clock: Clock,
  ) {
    this.#clock = clock;
  }

  /**
   * The answer for delivery `key`. The first call runs `deliver(reply)` (which resolves when the
   * handlers are done); a repeat of the same key shares that answer and runs nothing. `sendLater`
   * posts a reply made after the deadline, or a second reply. `spentMs`: the part of the deadline
   * used already (a Slack-form lookup); undefined when the server was answered already (every reply
   * then goes through `sendLater`). `keeper`: how the delivery is kept should its deadline pass
   * while its handlers run; without it, it is answered all the same.
   */
  answer(
    key: string,
    deliver: (reply: ReplyFn, beforeAsking: () => Promise<void>) => Promise<unknown>,
    sendLater: ReplyFn,
    spentMs: number | undefined,
    keeper?: Keeper,
  ): { answer: Promise<Answer>; repeat: boolean } {
    this.#prune();
    const known = this.#answers.get(key);
    // The first's connection was closed (its letter refused): this retry has its own deadline.
    if (known)
      return { answer: known.unkept ? this.#answerBy(known, spentMs).answer : known.answer, repeat: true };
    let ended!: () => void;
    const over = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const exchange: Exchange = {
      answer: Promise.resolve({}),
      expires: this.#clock.now() + KEEP_ANSWERS_MS,
      running: true,
      over,
      keeper,
    };
    this.#answers.set(key, exchange);
    const first = this.#answerBy(exchange, spentMs);
    exchange.answer = first.answer;
    const reply: ReplyFn = async (content) => {
      // The server posts nothing for a blank answer, and says nothing: through the API it is
      // refused (400), as a bot's on a queue is, and the answer stays open for the next reply.
      if (content.trim() === "") return sendLater(content);
      // The run goes on after its answer: kept first (the server will not send it again).
      if (first.open && exchange.running && keeper !== undefined)
        await this.#keep(exchange, first, "replied").catch(() => {}); // logged by the keeper
      if (!first.give({ content })) return sendLater(content);
      // The server posts this reply after we answer: its id is not known to the handler.
      return { id: -1 };
    };
    // A dialog's question sent before the answer (through the API, or as the answer): kept first,
    // so that a kill once it is out loses no dialog (the next start replays the letter).
    const beforeAsking = async () => {
      if (first.open && exchange.running && keeper !== undefined)
        await this.#keep(exchange, first, "asked").catch(() => {}); // logged by the keeper
    };
    const done = () => {
      exchange.running = false;
      ended();
      const letter = exchange.letter;
      if (letter === undefined || keeper === undefined) return;
      // Kept (or being kept) while it ran: over now, its letter goes, looked for when a write of
      // it was reported failed (it may have landed: left, it would read as a failure).
      const settle = () => keeper.settle(undefined);
      void letter.then((id) => (exchange.unsure ? settle() : id !== undefined && keeper.settle(id)), settle);
    };
    // Answered already (found after its answer): kept before it runs, as one answered while it runs.
    const kept =
      spentMs === undefined && keeper !== undefined
        ? this.#keep(exchange, first, "answered").catch(() => {}) // logged by the keeper; it runs all the same
        : undefined;
    const run = kept ? kept.then(() => deliver(reply, beforeAsking)) : deliver(reply, beforeAsking);
    run.then(done, done);
    return { answer: first.answer, repeat: false };
  }

  /** Delivery `key` is handled elsewhere (its dead letter's replay): a repeat shares an empty answer. */
  settled(key: string): void {
    this.#prune();
    if (this.#answers.has(key)) return;
    const over = Promise.resolve();
    const expires = this.#clock.now() + KEEP_ANSWERS_MS;
    this.#answers.set(key, { answer: Promise.resolve({}), expires, running: false, over, keeper: undefined });
  }

  /**
   * One answer to the server for `x`: without a reply once its run is over; at the deadline (what
   * is left of it after `spentMs`), without a reply too once kept, or refused if it could not be.
   * Given at once when the server was answered already (`spentMs` undefined).
   */
  #answerBy(x: Exchange, spentMs: number | undefined): Pending {
    const pending = new Pending();
    if (spentMs === undefined) {
      pending.give({});
      return pending;
    }
    void x.over.then(() => pending.give({}));
    const wait = Math.max(0, this.deadlineMs() - spentMs);
    const timer = this.#clock.setTimeout(() => void this.#atDeadline(x, pending), wait);
    void pending.answer.then(() => this.#clock.clearTimeout(timer));
    return pending;
  }

  async #atDeadline(x: Exchange, pending: Pending): Promise<void> {
    if (!pending.open) return;
    if (!x.running || x.keeper === undefined) {
      pending.give({});
      return;
    }
    try {
      await this.#keep(x, pending, "deadline");
      pending.give({});
    } catch {
      x.unkept = true;
      pending.give({ refused: true });
    }
  }

  /** `x` kept for the answer `pending` gives, once however many ask. */
  #keep(x: Exchange, pending: Pending, why: KeptWhy): Promise<string | undefined> {
    if (pending.keeping === undefined) {
      const keeping = (x.keeper as Keeper).keep(x.unkept === true, why);
      // Marked before the run's end reads it (this handler comes first).
      keeping.catch(() => {
        x.unsure = true;
      });
      pending.keeping = keeping;
      x.letter = keeping;
    }
    return pending.keeping;
  }

  #prune(): void {
    const now = this.#clock.now();
    // Insertion order is expiry order: stop at the first live entry.
    for (const [key, entry] of this.#answers) {
      if (entry.expires > now) break;
      this.#answers.delete(key);
    }
  }
}
