/**
 * A reply that follows its message where it was moved while the handler worked (a topic renamed
 * or resolved, moved to another channel). Sent to the old topic, it would start a topic of that
 * name anew, apart from the conversation it answers. A send into the event's own channel topic
 * made {@link FOLLOW_AFTER_MS} or more after its handler began reads where the message is now
 * (one GET /messages, again only once as long has passed) and goes there. A quick reply reads
 * nothing: a move within seconds of a message is rare, and a read per reply would spend the
 * budget the server allows (200 calls a minute).
 */
import type { Client } from "../api/create-client.ts";
import type { Logger } from "../api/logger.ts";
import { messagePages } from "../api/message-pages.ts";
import type { SendMessageParams } from "../api/resources/messages.ts";
import type { AnyEvent } from "../wire/events.ts";
import type { Message } from "../wire/records.ts";

/** How long after its message a send reads where the message is now. */
export const FOLLOW_AFTER_MS = 5_000;

export interface ReplyFollowDeps {
  api: Client;
  featureLevel: number;
  now(): number;
  signal: AbortSignal;
  log: Logger;
}

/** Where the event's message was, when it was sent (ms, the server's time), when its handler began (ms). */
export interface MessagePlace {
  id: number;
  to: number;
  topic: string;
  sentAt: number;
  began: number;
}

/** The follower of a channel message's run; undefined for any other event. */
export function followerFor(
  event: AnyEvent,
  began: number,
  deps: ReplyFollowDeps,
): ReplyFollower | undefined {
  const message = event.type === "message" ? (event as { message?: Partial<Message> }).message : undefined;
  const { id, type, stream_id: to, subject: topic, timestamp = 0 } = message ?? {};
  if (type !== "stream" || id === undefined || to === undefined || topic === undefined) return undefined;
  return new ReplyFollower(deps, { id, to, topic, sentAt: timestamp * 1000, began });
}

export class ReplyFollower {
  #place: { to: number; topic: string };
  /** When the place was last learnt (the handler's start at first). */
  #learnt: number;

  constructor(
    private readonly deps: ReplyFollowDeps,
    private readonly message: MessagePlace,
  ) {
    this.#place = { to: message.to, topic: message.topic };
    this.#learnt = message.began;
  }

  /**
   * `params`, sent where the event's message is now when they name where it was. `earlier`: for
   * a send an earlier run may have made (looked for by a run again): read where the message is
   * now unless it was sent too recently for that run to have followed it.
   */
  async follow(params: SendMessageParams, earlier = false): Promise<SendMessageParams> {
    const { message } = this;
    if (!(params.type === "channel" || params.type === "stream")) return params;
    if (params.to !== message.to || (params.topic ?? "") !== message.topic) return params;
    const now = this.deps.now();
    const due = earlier ? now - message.sentAt >= FOLLOW_AFTER_MS : now - this.#learnt >= FOLLOW_AFTER_MS;
    if (due) await this.#read();
    const place = this.#place;
    return place.to === message.to && place.topic === message.topic ? params : { ...params, ...place };
  }

  async #read(): Promise<void> {
    const { api, featureLevel, signal, log, now } = this.deps;
    const id = this.message.id;
    try {
      const [page] = messagePages({ client: api, featureLevel, signal }, [id]);
      const found = (await page!).find((m) => m.id === id);
      this.#learnt = now();
      if (found?.stream_id !== undefined) this.#place = { to: found.stream_id, topic: found.subject };
    } catch (err) {
      if (signal.aborted) throw err;
      log.warn(
        { err, messageId: id },
        "could not read where the message answered is now; replying where it was",
      );
    }
  }
}
