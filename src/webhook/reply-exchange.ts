/**
 * The answer to one outgoing-webhook delivery. The server waits 10 s for it: a reply the handler
 * makes before the deadline goes back in the HTTP response (the server posts it); after that the
 * response says `response_not_required` and later replies go through the API. A delivery the
 * server repeats (it retries on timeouts and connection errors) gets the first one's answer,
 * whether the first is still running or finished recently, so its handlers run once.
 */

/** A reply for the response body, or nothing to post. */
export type Answer = { content: string } | { content?: undefined };

export type ReplyFn = (content: string) => Promise<{ id: number }>;

export interface ReplyExchangeOptions {
  /** Answer the server within this time. */
  deadlineMs: number;
  /** Keep answers this long for repeats (default 10 minutes; the server retries within a minute). */
  keepMs?: number;
  now?: () => number;
}

/**
 * The id `ctx.reply()` resolves with when its content travels in the HTTP response: the server
 * posts that message after we answer, so its id is not known to the handler.
 */
export const REPLY_IN_RESPONSE_ID = -1;

export class ReplyExchange {
  readonly #o: Required<ReplyExchangeOptions>;
  readonly #answers = new Map<string, { answer: Promise<Answer>; expires: number }>();

  constructor(options: ReplyExchangeOptions) {
    this.#o = { keepMs: 600_000, now: Date.now, ...options };
  }

  /**
   * The answer for delivery `key`. The first call runs `deliver(reply)` (which resolves when the
   * handlers are done); a repeat of the same key shares that answer and runs nothing.
   * `sendLater` posts a reply made after the deadline, or a second reply.
   */
  answer(
    key: string,
    deliver: (reply: ReplyFn) => Promise<unknown>,
    sendLater: ReplyFn,
  ): { answer: Promise<Answer>; repeat: boolean } {
    this.#prune();
    const known = this.#answers.get(key);
    if (known) return { answer: known.answer, repeat: true };
    let settle!: (a: Answer) => void;
    const answer = new Promise<Answer>((resolve) => {
      settle = resolve;
    });
    let open = true;
    const close = (a: Answer) => {
      if (!open) return;
      open = false;
      clearTimeout(timer);
      settle(a);
    };
    const timer = setTimeout(() => close({}), this.#o.deadlineMs);
    const reply: ReplyFn = async (content) => {
      if (!open) return sendLater(content);
      close({ content });
      return { id: REPLY_IN_RESPONSE_ID };
    };
    this.#answers.set(key, { answer, expires: this.#o.now() + this.#o.keepMs });
    deliver(reply).then(
      () => close({}),
      () => close({}),
    );
    return { answer, repeat: false };
  }

  /** Answers kept for repeats (for tests and metrics). */
  get size(): number {
    return this.#answers.size;
  }

  #prune(): void {
    const now = this.#o.now();
    // Insertion order is expiry order: stop at the first live entry.
    for (const [key, entry] of this.#answers) {
      if (entry.expires > now) break;
      this.#answers.delete(key);
    }
  }
}
