/**
 * Which events must be handled in order with which: the conversation key.
 *
 * - message, typing: `channel:<stream_id>:<topic lowercased>` (topics are case-insensitive) or
 *   `dm:<sorted participant ids>`.
 * - update_message that moves messages: the conversation they left (ordered after the messages
 *   already there). A content-only edit, a reaction, typing_edit_message, and a delete without a
 *   topic: the conversation of that message if known (see {@link ConversationKeys}), else
 *   `msg:<message id>`.
 * - delete_message with a topic: its channel conversation.
 * - Every other event (subscription, realm_user, gap, unknown events, …): the single key `bot`, so
 *   state updates about the bot's world apply in queue order. They are rare, so serializing them
 *   costs nothing, and it spares handlers from e.g. a `subscription remove` overtaking its `add`.
 *   An unknown event (one that failed its schema included) may lack what a key is made of: the
 *   caller gives it `bot` without asking here.
 */
import type { EventMap, ServerEvent } from "../wire/events.ts";

/** The key for the bot's own (non-conversation) events. */
export const BOT_KEY = "bot";

/** The conversation key of `event`; `knownMessage` maps a message id to its conversation's key. */
export function conversationKey(
  event: ServerEvent,
  knownMessage?: (messageId: number) => string | undefined,
): string {
  const byMessage = (id: number | undefined) =>
    id === undefined ? BOT_KEY : (knownMessage?.(id) ?? `msg:${id}`);
  switch (event.type) {
    case "message":
      return messageKey(event.message);
    case "typing": {
      if (event.message_type === "direct")
        return dmKey((event.recipients ?? [event.sender]).map((u) => u.user_id));
      return event.stream_id === undefined ? BOT_KEY : channelKey(event.stream_id, event.topic ?? "");
    }
    case "update_message":
      if (event.stream_id !== undefined && event.orig_subject !== undefined)
        return channelKey(event.stream_id, event.orig_subject);
      return byMessage(event.message_id);
    case "delete_message":
      if (event.stream_id !== undefined && event.topic !== undefined)
        return channelKey(event.stream_id, event.topic);
      return byMessage(event.message_id ?? event.message_ids?.[0]);
    case "reaction":
    case "typing_edit_message":
      return byMessage(event.message_id);
    default:
      return BOT_KEY;
  }
}

/** The conversation of a message: its channel and topic, or its direct-message group. */
function messageKey(m: EventMap["message"]["message"]): string {
  const to = m.display_recipient;
  if (Array.isArray(to)) {
    const [a, b] = to;
    return to.length === 2 && a && b ? pairKey(a.id, b.id) : dmKey(to.map((u) => u.id));
  }
  return m.stream_id === undefined ? `msg:${m.id}` : channelKey(m.stream_id, m.subject);
}

/** How many built keys each memo keeps before it starts over. */
const KEY_CACHE_SIZE = 10_000;

/** Keys built from two parts, memoized in nested maps; cleared past KEY_CACHE_SIZE. */
class KeyMemo<A, B> {
  readonly #byFirst = new Map<A, Map<B, string>>();
  #size = 0;

  constructor(readonly build: (a: A, b: B) => string) {}

  get(a: A, b: B): string {
    let inner = this.#byFirst.get(a);
    if (inner === undefined) {
      inner = new Map();
      this.#byFirst.set(a, inner);
    }
    let key = inner.get(b);
    if (key === undefined) {
      key = this.build(a, b);
      if (++this.#size > KEY_CACHE_SIZE) {
        this.#byFirst.clear();
        this.#size = 1;
        this.#byFirst.set(a, inner);
        inner.clear();
      }
      inner.set(b, key);
    }
    return key;
  }
}

/** Memoized: a conversation's messages come in runs, so its key is built once per run. */
const channelKeys = new KeyMemo(
  (channelId: number, topic: string) => `channel:${channelId}:${topic.toLowerCase()}`,
);

const pairKeys = new KeyMemo((low: number, high: number) =>
  low === high ? `dm:${low}` : `dm:${low},${high}`,
);

/** The usual direct message, with one other person: no set, no sort, memoized. */
function pairKey(a: number, b: number): string {
  return a < b ? pairKeys.get(a, b) : pairKeys.get(b, a);
}

/** `channel:<id>:<topic lowercased>`, memoized. */
export function channelKey(channelId: number, topic: string): string {
  return channelKeys.get(channelId, topic);
}

export function dmKey(userIds: readonly number[]): string {
  if (userIds.length === 2) return pairKey(userIds[0] as number, userIds[1] as number);
  return `dm:${[...new Set(userIds)].sort((a, b) => a - b).join(",")}`;
}

/**
 * {@link conversationKey} with a memory of recent messages, so that edits, reactions and deletes
 * of a message are ordered with the rest of its conversation, and follow it when it is moved.
 */
export class ConversationKeys {
  readonly #known: MessageMemory;

  /** @param capacity how many message ids to remember (oldest forgotten first). @default 10000 */
  constructor(capacity = 10_000) {
    this.#known = new MessageMemory(capacity);
  }

  private readonly lookup = (id: number): string | undefined => this.#known.get(id);

  keyOf(event: ServerEvent): string {
    if (event.type === "message") {
      const key = messageKey(event.message);
      this.#known.set(event.message.id, key);
      return key;
    }
    const key = conversationKey(event, this.lookup);
    if (event.type === "update_message") {
      const channelId = event.new_stream_id ?? event.stream_id;
      const topic = event.subject ?? event.orig_subject;
      if (channelId !== undefined && topic !== undefined && event.orig_subject !== undefined) {
        for (const id of event.message_ids) this.#known.set(id, channelKey(channelId, topic));
      }
    } else if (event.type === "delete_message") {
      for (const id of deletedIds(event)) this.#known.delete(id);
    }
    return key;
  }
}

/**
 * The conversation key of each of the last `capacity` messages. Messages arrive oldest first, so
 * ids are kept as a ring in increasing order, keys beside them, found by bisection: two array
 * writes per message, no hash-table churn. Ids out of order, or named by a move after the ring
 * forgot them, go in a small Map.
 */
export class MessageMemory {
  /** Ids in increasing order from `#start` (the oldest, once the ring is full) round to it. */
  readonly #ids: number[] = [];
  readonly #keys: (string | undefined)[] = [];
  #start = 0;
  /** Made on first use: most bots never see a message out of order. */
  #others: Map<number, string> | undefined;

  constructor(readonly capacity: number) {}

  get(id: number): string | undefined {
    if (this.#others !== undefined && this.#others.size > 0) {
      const key = this.#others.get(id);
      if (key !== undefined) return key;
    }
    const at = this.#find(id);
    return at < 0 ? undefined : this.#keys[at];
  }

  set(id: number, key: string): void {
    const n = this.#ids.length;
    if (n === 0 || id > (this.#ids[(this.#start + n - 1) % n] as number)) {
      this.#append(id, key);
      return;
    }
    const at = this.#find(id);
    if (at >= 0) {
      this.#keys[at] = key;
      return;
    }
    this.#others ??= new Map();
    const others = this.#others;
    others.set(id, key);
    if (others.size > this.capacity) others.delete(others.keys().next().value as number);
  }

  delete(id: number): void {
    this.#others?.delete(id);
    const at = this.#find(id);
    if (at >= 0) this.#keys[at] = undefined;
  }

  #append(id: number, key: string): void {
    if (this.#ids.length < this.capacity) {
      this.#ids.push(id);
      this.#keys.push(key);
      return;
    }
    this.#ids[this.#start] = id;
    this.#keys[this.#start] = key;
    this.#start = (this.#start + 1) % this.capacity;
  }

  /** The slot holding `id`, or -1. */
  #find(id: number): number {
    const n = this.#ids.length;
    let low = 0;
    let high = n - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const slot = (this.#start + mid) % n;
      const at = this.#ids[slot] as number;
      if (at === id) return slot;
      if (at < id) low = mid + 1;
      else high = mid - 1;
    }
    return -1;
  }
}

/** The messages a `delete_message` event deletes: `message_ids` (bulk), else its one `message_id`. */
export function deletedIds(event: EventMap["delete_message"]): readonly number[] {
  return event.message_ids ?? (event.message_id === undefined ? [] : [event.message_id]);
}
