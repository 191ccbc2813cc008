/**
 * The server side of recurring bookings: the bot's scheduled messages through its client, the
 * announcement's recipient resolved to ids, and the record (state `<bot>/bookings/<id>`) that
 * says which occurrence is booked and how to recognise it on the server if the process died
 * before its id was written.
 */
import { z } from "zod";
import type { Client } from "../api/create-client.ts";
import { isApiError } from "../api/errors.ts";
import { codePointLength } from "../effects/limits/code-points.ts";
import { digest, normalizeContent, normalizeTopic } from "../effects/schedule/normalize.ts";
import { keptClientLookups } from "../effects/schedule/recipient-ids.ts";
import { type RecipientLookups, resolveRecipient } from "../effects/schedule/resolve-recipient.ts";
import { scheduleInvalid } from "../effects/schedule/scheduled-message-error.ts";
import type { Clock } from "../time/clock.ts";
import type { ScheduledMessage } from "../wire/records.ts";
import { callContent } from "./content-call.ts";
import type { RecurringAnnouncement } from "./declarations.ts";
import { isDatedTopic, topicOf } from "./occurrence-topic.ts";

export const BookingRecordSchema = z.object({
  /** The occurrence booked, ISO UTC. */
  occurrence: z.string(),
  /** `occurrenceKey(id, occurrence)`: the booking's identity, the same whichever process computes it. */
  key: z.string(),
  /** Digest of cron, time zone and resolved recipient; a change means "re-book". */
  specHash: z.string(),
  /** Absent while the POST is in flight (written just before it). */
  scheduledMessageId: z.number().int().optional(),
  /** True once a failed booking was moved to a new time (done at most once per occurrence). */
  retried: z.boolean().optional(),
  /**
   * True once the occurrence is over (sent, cancelled or dropped) and logged as such, while the
   * next one is not booked yet: a retry books that one without counting this one again.
   */
  settled: z.boolean().optional(),
  /** How the booking looks on the server. */
  target: z.object({
    type: z.enum(["stream", "private"]),
    to: z.union([z.number().int(), z.array(z.number().int())]),
    topic: z.string().optional(),
    contentHash: z.string(),
    /** UNIX seconds the server will send at (the occurrence, or later after a retry). */
    timestamp: z.number().int(),
  }),
});

export type BookingRecord = z.infer<typeof BookingRecordSchema>;

/** An announcement's recipient as the server lists it, and the digest of its schedule and recipient. */
export type AnnouncementTarget = Pick<BookingRecord["target"], "type" | "to" | "topic"> & {
  /** Changes when the cron, the time zone or the recipient changes (not the content). */
  specHash: string;
};

/** The digest stored to recognise content without keeping a copy of it. */
export function contentHash(content: string): string {
  return digest(normalizeContent(content));
}

/**
 * Does `stored`, content as the server lists it, have the digest `hash`? Also by the digest
 * earlier versions wrote, of the content stripped as JavaScript's `\s` sees whitespace: it differs
 * from the server's form only when that ends in U+FEFF, which the server keeps and those stripped.
 * (Their digest of content ending in U+0085 or U+001C–U+001F kept those, which the server strips:
 * such a booking is not found.)
 */
function hasDigest(stored: string, hash: string): boolean {
  if (contentHash(stored) === hash) return true;
  if (!stored.endsWith("\uFEFF")) return false;
  let end = stored.length;
  while (end > 0 && /\s/.test(stored[end - 1]!)) end--;
  return digest(stored.slice(0, end).replace(/^\n+/, "")) === hash;
}

/** What the server reported at register (each `undefined` until known). */
export interface ServerTexts {
  /** The display name of the empty topic (read as ""). */
  emptyTopicName: () => string;
  /** `max_message_length`: a longer announcement is refused. */
  maxMessageLength: () => number | undefined;
  /** `max_topic_length`: an occurrence whose topic is longer is refused. */
  maxTopicLength: () => number | undefined;
}

/** What bookings need of the server, and how channel names and emails become ids. */
export interface BookingServerOptions extends ServerTexts {
  /** The bot's caches (`ctx.schedule`'s lookups); default: the client's, each email's id kept an hour. */
  lookups?: RecipientLookups;
  /** The default lookups' clock, and the content function's timeout's. */
  clock?: Clock;
  /**
   * How long a content function may take (the bot's `handler_timeout`): past it the booking fails
   * as any other and is tried again later. Default: unbounded.
   */
  contentTimeoutMs?: number;
  /** Aborted when the bot stops: a content function under way is given up. */
  stopping?: AbortSignal;
}

export class BookingServer {
  readonly #client: Client;
  readonly #emptyTopicName: () => string;
  readonly #texts: BookingServerOptions;
  readonly #lookups: RecipientLookups;
  /** The bot's own id, asked once (announcements reconciled at once share the question). */
  #selfId: Promise<number> | undefined;

  constructor(client: Client, texts: BookingServerOptions) {
    this.#client = client;
    this.#lookups = sharedWhileAsked(texts.lookups ?? keptClientLookups(client, texts.clock));
    this.#emptyTopicName = texts.emptyTopicName;
    this.#texts = texts;
  }

  /**
   * The content of `spec`'s booking for `occurrence`. Throws when it is empty, or longer than
   * the server's `max_message_length`: the server would cut it short, and a booking whose copy on
   * the server differs from what was sent is not recognised after a crash (it would be booked again).
   * A content function is bounded by `contentTimeoutMs` and the stop (content-call.ts): one that
   * hangs fails its booking, tried again later, and what it gives later is dropped.
   */
  async content(id: string, spec: RecurringAnnouncement, occurrence: Date): Promise<string> {
    const { clock, contentTimeoutMs: timeoutMs, stopping } = this.#texts;
    const content =
      typeof spec.content === "function"
        ? await callContent(id, spec.content, occurrence, { clock, timeoutMs, stopping })
        : spec.content;
    if (typeof content !== "string" || normalizeContent(content) === "") {
      throw new Error(`announcement "${id}": its content is empty for ${occurrence.toISOString()}`);
    }
    const max = this.#texts.maxMessageLength();
    const length = codePointLength(normalizeContent(content));
    if (max !== undefined && length > max) {
      throw scheduleInvalid(
        "content",
        `announcement "${id}": its content is ${length} characters; the server allows ${max}. Shorten it or split it into several announcements.`,
      );
    }
    return content;
  }

  /** The bot's undelivered scheduled messages, failed ones included. */
  async list(): Promise<ScheduledMessage[]> {
    return (await this.#client.scheduledMessages.list()).scheduled_messages;
  }

  /** Book `content` for the recipient and time of `target`; resolves the new id. */
  async create(target: BookingRecord["target"], content: string): Promise<number> {
    const { scheduled_message_id } = await this.#client.scheduledMessages.create({
      type: target.type === "stream" ? "channel" : "direct",
      to: target.to,
      ...(target.type === "stream" ? { topic: target.topic ?? "" } : {}),
      content,
      scheduled_delivery_timestamp: target.timestamp,
      read_by_sender: true,
    });
    return scheduled_message_id;
  }

  /**
   * Delete a booking found in `list` and claim it there: no announcement may adopt it from that
   * list, read before the delete (a renamed one, same schedule under a new id, would otherwise
   * take it, and its remove event would then skip that occurrence).
   */
  async drop(sm: ScheduledMessage, claimed: Set<number>): Promise<void> {
    claimed.add(sm.scheduled_message_id);
    await this.delete(sm.scheduled_message_id);
  }

  /** Delete a booking; one already sent or deleted (404) is fine. */
  async delete(id: number): Promise<void> {
    try {
      await this.#client.scheduledMessages.delete(id);
    } catch (err) {
      if (!(isApiError(err) && err.status === 404)) throw err;
    }
  }

  async update(
    id: number,
    change: { scheduled_delivery_timestamp: number } | { content: string } | { topic: string },
  ): Promise<void> {
    await this.#client.scheduledMessages.update(id, change);
  }

  /**
   * Resolves the announcement's `to` (names and emails to ids). Direct-message recipients are
   * listed by the server without the sender unless the message is to the sender alone (see
   * docs/internals/server-behaviour.md#event-shapes), so the bot's own id is dropped the same way.
   */
  async target(id: string, spec: RecurringAnnouncement): Promise<AnnouncementTarget> {
    const resolved = await resolveRecipient(this.#lookups, spec.to, `announcement "${id}"`);
    let target: Omit<AnnouncementTarget, "specHash">;
    if (resolved.kind === "channel") {
      // A dated topic is rendered per occurrence ({@link topicFor}); its template is what the hash keeps.
      const topic = typeof spec.topic === "function" ? "(function)" : spec.topic;
      target = { type: "stream", to: resolved.to, topic: normalizeTopic(topic, this.#emptyTopicName()) };
    } else {
      this.#selfId ??= this.#client.users.me().then(
        (me) => me.user_id,
        (err: unknown) => {
          this.#selfId = undefined; // asked again by the next booking
          throw err;
        },
      );
      const self = await this.#selfId;
      const others = resolved.to.filter((u) => u !== self);
      target = { type: "private", to: others.length > 0 ? others : [self] };
    }
    const specHash = digest([spec.cron, spec.timezone, target.type, target.to, target.topic ?? null]);
    return { ...target, specHash };
  }

  /**
   * The topic of `spec`'s booking for `occurrence`, as the server lists it; the fixed topic when
   * it names no day. Throws when a topic function gives no text, or a topic longer than the
   * server's `max_topic_length`: the server would cut it short, and a booking whose copy differs
   * from what was sent is not recognised after a crash (it would be booked again).
   */
  topicFor(id: string, spec: RecurringAnnouncement, occurrence: Date): string {
    const dated = isDatedTopic(spec.topic);
    const raw = dated ? topicOf(spec, occurrence) : (spec.topic as string | undefined);
    if (dated && (typeof raw !== "string" || raw.trim() === "")) {
      throw new Error(`announcement "${id}": its topic is empty for ${occurrence.toISOString()}`);
    }
    const topic = normalizeTopic(raw, this.#emptyTopicName());
    const max = this.#texts.maxTopicLength();
    const length = codePointLength(topic);
    if (max !== undefined && length > max) {
      throw scheduleInvalid(
        "topic",
        `announcement "${id}": its topic for ${occurrence.toISOString()} is ${length} characters; ` +
          `the server allows ${max} (it would cut it short). Shorten it.`,
      );
    }
    return topic;
  }

  /** The server's copy of `rec`: by id, or (an intent without one) by recipient, time and content. */
  find(rec: BookingRecord, list: ScheduledMessage[], claimed: Set<number>): ScheduledMessage | undefined {
    return list.find((sm) => {
      if (claimed.has(sm.scheduled_message_id)) return false;
      if (rec.scheduledMessageId !== undefined) return sm.scheduled_message_id === rec.scheduledMessageId;
      return this.matches(sm, rec);
    });
  }

  /** True when `sm` is the booking `rec` describes (same recipient, topic, time and content). */
  matches(sm: ScheduledMessage, rec: BookingRecord): boolean {
    const { target } = rec;
    if (sm.type !== target.type || sm.scheduled_delivery_timestamp !== target.timestamp) return false;
    if (JSON.stringify(sorted(sm.to)) !== JSON.stringify(sorted(target.to))) return false;
    if (sm.type === "stream" && normalizeTopic(sm.topic, this.#emptyTopicName()) !== (target.topic ?? "")) {
      return false;
    }
    return hasDigest(sm.content, target.contentHash);
  }
}

/**
 * `lookups` whose lookup of a name or email under way is shared: announcements reconciled at once
 * that name the same channel or person make one request for it, not one each.
 */
function sharedWhileAsked(lookups: RecipientLookups): RecipientLookups {
  const asked = new Map<string, Promise<number | undefined>>();
  const once = <T extends number | undefined>(key: string, ask: () => Promise<T>): Promise<T> => {
    let answer = asked.get(key) as Promise<T> | undefined;
    if (answer === undefined) {
      answer = ask().finally(() => asked.delete(key));
      asked.set(key, answer);
    }
    return answer;
  };
  return {
    channelId: (name, signal) => once(`channel:${name}`, () => lookups.channelId(name, signal)),
    userId: (email, signal) => once(`user:${email}`, () => lookups.userId(email, signal)),
    ...(lookups.renamed ? { renamed: (name: string) => lookups.renamed?.(name) } : {}),
  };
}

function sorted(to: number | readonly number[]): number | number[] {
  return typeof to === "number" ? to : [...to].sort((a, b) => a - b);
}
