/**
 * The receiver side of typing notifications: who is typing where, per the seed's state table.
 *
 * | state         | trigger                        | next          | effect                 |
 * |---------------|--------------------------------|---------------|------------------------|
 * | not displayed | `start`                        | displayed     | expiry timer starts    |
 * | displayed     | `start`                        | displayed     | expiry timer restarts  |
 * | displayed     | `stop`                         | not displayed | expiry timer cleared   |
 * | displayed     | expiry passes with no `start`  | not displayed |                        |
 *
 * State is kept per (conversation, sender). A `stop` for someone not displayed changes nothing.
 */
import { type Clock, realClock, type TimerHandle } from "../../time/clock.ts";
import type { EventMap } from "../../wire/events.ts";
import { serverDefaults } from "../../wire/responses.ts";

export type TypingEvent = EventMap["typing"];

/**
 * A typing event's conversation: a direct one is its participants, sender included (the server
 * lists the sender among a direct typing event's `recipients`); a channel one is the channel id
 * plus the topic, compared case-insensitively as the server compares topics.
 */
export type TypingConversation =
  | { type: "direct"; userIds: readonly number[] }
  | { type: "channel"; channelId: number; topic: string };

/** The conversation of a typing event; `undefined` for a channel event without `stream_id` or `topic`. */
export function typingConversation(event: TypingEvent): TypingConversation | undefined {
  if (event.message_type === "direct") {
    // The server already appends the sender to `recipients`; adding it again keeps us correct anyway.
    const ids = new Set([event.sender.user_id, ...(event.recipients ?? []).map((r) => r.user_id)]);
    return { type: "direct", userIds: [...ids].sort((a, b) => a - b) };
  }
  if (event.stream_id === undefined || event.topic === undefined) return undefined;
  return { type: "channel", channelId: event.stream_id, topic: event.topic };
}

/** A string equal for the same conversation, e.g. `"direct:8,10"` or `"channel:5:lunch"`. */
export function conversationKey(conversation: TypingConversation): string {
  if (conversation.type === "direct") {
    return `direct:${[...new Set(conversation.userIds)].sort((a, b) => a - b).join(",")}`;
  }
  return `channel:${conversation.channelId}:${conversation.topic.toLowerCase()}`;
}

export interface TypingTrackerOptions {
  /** `server_typing_started_expiry_period_milliseconds` from register (`ServerInfo.typing`). */
  expiryMs?: number;
  clock?: Clock;
  /** Senders to ignore, typically the bot itself (it receives its own typing events). */
  ignoreUserIds?: Iterable<number>;
}

/** Tracks typing indicators from `typing` events. */
export class TypingTracker {
  readonly expiryMs: number;
  readonly #clock: Clock;
  readonly #ignore: ReadonlySet<number>;
  /** Conversation key → (sender id → expiry timer), senders in the order they started typing. */
  readonly #rooms = new Map<string, Map<number, TimerHandle>>();

  constructor(options: TypingTrackerOptions = {}) {
    this.expiryMs = options.expiryMs ?? serverDefaults.server_typing_started_expiry_period_milliseconds;
    this.#clock = options.clock ?? realClock;
    this.#ignore = new Set(options.ignoreUserIds ?? []);
  }

  /** Applies one typing event. */
  handle(event: TypingEvent): void {
    const userId = event.sender.user_id;
    const conversation = typingConversation(event);
    if (conversation === undefined || this.#ignore.has(userId)) return;
    const key = conversationKey(conversation);
    const room = this.#rooms.get(key) ?? new Map<number, TimerHandle>();
    const timer = room.get(userId);
    if (event.op === "stop") {
      if (timer !== undefined) this.#hide(key, room, userId);
      return;
    }
    if (timer !== undefined) this.#clock.clearTimeout(timer);
    this.#rooms.set(key, room);
    room.set(
      userId,
      this.#clock.setTimeout(() => this.#hide(key, room, userId), this.expiryMs),
    );
  }

  /** User ids currently shown as typing in `conversation`, in the order they started. */
  typingIn(conversation: TypingConversation): number[] {
    return [...(this.#rooms.get(conversationKey(conversation))?.keys() ?? [])];
  }

  /** Whether `userId` is shown as typing in `conversation`, or anywhere if none is given. */
  isTyping(userId: number, conversation?: TypingConversation): boolean {
    if (conversation !== undefined)
      return this.#rooms.get(conversationKey(conversation))?.has(userId) ?? false;
    for (const room of this.#rooms.values()) if (room.has(userId)) return true;
    return false;
  }

  /** Clears every timer and indicator. */
  dispose(): void {
    for (const room of this.#rooms.values())
      for (const timer of room.values()) this.#clock.clearTimeout(timer);
    this.#rooms.clear();
  }

  #hide(key: string, room: Map<number, TimerHandle>, userId: number): void {
    const timer = room.get(userId);
    if (timer !== undefined) this.#clock.clearTimeout(timer);
    room.delete(userId);
    if (room.size === 0 && this.#rooms.get(key) === room) this.#rooms.delete(key);
  }
}
