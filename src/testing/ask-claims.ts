/**
 * Which of the bot's messages answers which `ask`. Each ask takes the bot's first message in the
 * asker's conversation whose id is above the asking message's, skipping those earlier asks in that
 * conversation took: asks made at once in one conversation take the bot's messages there in the
 * order they were asked, whichever of them looks first. That is the bot's own order, since the
 * daemon handles one conversation's messages one after the other.
 */
import type { TestMessage } from "./test-message.ts";

/** One `ask`: the message it posted, and the reply once taken. */
export interface Ask {
  readonly asked: TestMessage;
  reply?: TestMessage;
  /** It stopped waiting without a reply: it takes none later. */
  gaveUp?: boolean;
}

export class AskClaims {
  /** Every ask in the order posted (by message id). */
  readonly #asks: Ask[] = [];

  /** Registers an ask; call right after posting, before anything awaits. */
  open(asked: TestMessage): Ask {
    const ask: Ask = { asked };
    this.#asks.push(ask);
    return ask;
  }

  /** The bot's messages `take` may need are above this id: the lowest of the asks still waiting. */
  floor(): number {
    let low = Number.POSITIVE_INFINITY;
    for (const a of this.#asks) if (!a.reply && !a.gaveUp) low = Math.min(low, a.asked.id);
    return low;
  }

  /**
   * The reply `ask` takes among `sent` (the bot's messages above {@link floor}, oldest first), or
   * undefined while none is there for it. Once found it is kept: a later message has a higher id,
   * so it cannot change.
   */
  take(ask: Ask, sent: readonly TestMessage[]): TestMessage | undefined {
    if (ask.reply) return ask.reply;
    const taken = new Set<number>();
    for (const earlier of this.#asks) {
      if (earlier === ask) break;
      if (!sameConversation(earlier.asked, ask.asked)) continue;
      if (!earlier.reply && !earlier.gaveUp) earlier.reply = firstFree(earlier, sent, taken);
      // An earlier ask still without a reply takes the next one that comes: none is left for this one.
      if (!earlier.reply) {
        if (earlier.gaveUp) continue;
        return undefined;
      }
      taken.add(earlier.reply.id);
    }
    ask.reply = firstFree(ask, sent, taken);
    return ask.reply;
  }

  /** `ask` stopped waiting; returns the ids of the bot's messages after it that earlier asks took. */
  giveUp(ask: Ask, sent: readonly TestMessage[]): number[] {
    if (!ask.reply) ask.gaveUp = true;
    const taken = new Set(
      this.#asks.filter((a) => a !== ask && a.asked.id < ask.asked.id).map((a) => a.reply?.id),
    );
    return sent
      .filter((m) => m.id > ask.asked.id && taken.has(m.id) && sameConversation(m, ask.asked))
      .map((m) => m.id);
  }
}

function firstFree(ask: Ask, sent: readonly TestMessage[], taken: ReadonlySet<number>) {
  return sent.find((m) => m.id > ask.asked.id && !taken.has(m.id) && sameConversation(m, ask.asked));
}

/** Whether two messages are in one conversation: a channel's topic, or one direct-message group. */
export function sameConversation(a: TestMessage, b: TestMessage): boolean {
  if (a.type === "stream" || b.type === "stream") {
    return (
      a.type === "stream" &&
      b.type === "stream" &&
      a.stream_id === b.stream_id &&
      a.subject.toLowerCase() === b.subject.toLowerCase()
    );
  }
  const people = (m: TestMessage) =>
    (m.display_recipient as { id: number }[])
      .map((r) => r.id)
      .sort((x, y) => x - y)
      .join(",");
  return people(a) === people(b);
}
