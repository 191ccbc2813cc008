/**
 * The receiver side of typing notifications: who is typing where, per the seed's state table.
 *
 * | state         | trigger                        | next          | effect                 |
 * |---------------|--------------------------------|---------------|------------------------|
 * | not displayed | `start`                        | displayed     | change event           |
 * | displayed     | `start`                        | displayed     | expiry timer restarts  |
 * | displayed     | `stop`                         | not displayed | change event           |
 * | displayed     | expiry passes with no `start`  | not displayed | change event "expired" |
 *
 * State is kept per (conversation, sender). A `stop` for someone not displayed changes nothing.
 */
import { type Clock, realClock, type TimerHandle } from "../../time/clock.ts";
import {
  conversationKey,
  type TypingConversation,
  type TypingEvent,
  typingConversation,
} from "./typing-conversation.ts";
import { TYPING_TIMINGS_FEATURE_LEVEL } from "./typing-timings.ts";

/** One indicator appearing or disappearing. */
export interface TypingChange {
  conversation: TypingConversation;
  userId: number;
  typing: boolean;
  reason: "start" | "stop" | "expired";
}

export type TypingListener = (change: TypingChange) => void;

export interface TypingTrackerOptions {
  /** `server_typing_started_expiry_period_milliseconds` from register. */
  expiryMs?: number;
  /** The server's feature level; below 204 the default expiry is 15000 ms instead of 45000. */
  featureLevel?: number;
  clock?: Clock;
  /** Senders to ignore, typically the bot itself (it receives its own typing events). */
  ignoreUserIds?: Iterable<number>;
  /** A change listener threw. Default: `console.error`. */
  onListenerError?: (error: unknown) => void;
}

interface Room {
  conversation: TypingConversation;
  /** Sender id → expiry timer, in the order they started typing. */
  typists: Map<number, TimerHandle>;
}

/**
 * Tracks typing indicators from `typing` events.
 *
 * @example
 * ```ts
 * const typing = new TypingTracker({ expiryMs: register.server_typing_started_expiry_period_milliseconds, ignoreUserIds: [me] });
 * typing.onChange(({ userId, typing: on }) => log.debug({ userId, on }, "typing"));
 * bot.on("typing", (event) => typing.handle(event));
 * typing.typingIn({ type: "stream", streamId: 5, topic: "deploys" }); // [8]
 * ```
 */
export class TypingTracker {
  readonly expiryMs: number;
  readonly #clock: Clock;
  readonly #ignore: ReadonlySet<number>;
  readonly #onListenerError: (error: unknown) => void;
  readonly #rooms = new Map<string, Room>();
  readonly #listeners = new Set<TypingListener>();

  constructor(options: TypingTrackerOptions = {}) {
    const old = options.featureLevel !== undefined && options.featureLevel < TYPING_TIMINGS_FEATURE_LEVEL;
    this.expiryMs = options.expiryMs ?? (old ? 15_000 : 45_000);
    this.#clock = options.clock ?? realClock;
    this.#ignore = new Set(options.ignoreUserIds ?? []);
    this.#onListenerError = options.onListenerError ?? ((e) => console.error("typing listener failed:", e));
  }

  /** Applies one typing event. Returns true if an indicator appeared or disappeared. */
  handle(event: TypingEvent): boolean {
    const userId = event.sender.user_id;
    const conversation = typingConversation(event);
    if (conversation === undefined || this.#ignore.has(userId)) return false;
    const key = conversationKey(conversation);
    const room = this.#rooms.get(key);
    const timer = room?.typists.get(userId);
    if (event.op === "stop") {
      if (room === undefined || timer === undefined) return false;
      this.#hide(key, room, userId, "stop");
      return true;
    }
    if (room !== undefined && timer !== undefined) {
      this.#clock.clearTimeout(timer);
      room.typists.set(userId, this.#expiry(key, room, userId));
      return false;
    }
    const target = room ?? { conversation, typists: new Map() };
    this.#rooms.set(key, target);
    target.typists.set(userId, this.#expiry(key, target, userId));
    this.#emit({ conversation: target.conversation, userId, typing: true, reason: "start" });
    return true;
  }

  /** User ids currently shown as typing in `conversation`, in the order they started. */
  typingIn(conversation: TypingConversation): number[] {
    return [...(this.#rooms.get(conversationKey(conversation))?.typists.keys() ?? [])];
  }

  /** Whether `userId` is shown as typing in `conversation`, or anywhere if none is given. */
  isTyping(userId: number, conversation?: TypingConversation): boolean {
    if (conversation !== undefined)
      return this.#rooms.get(conversationKey(conversation))?.typists.has(userId) ?? false;
    for (const room of this.#rooms.values()) if (room.typists.has(userId)) return true;
    return false;
  }

  /** Calls `listener` on every indicator change; returns a function that unsubscribes it. */
  onChange(listener: TypingListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Clears every timer, indicator and listener, without emitting changes. */
  dispose(): void {
    for (const room of this.#rooms.values())
      for (const timer of room.typists.values()) this.#clock.clearTimeout(timer);
    this.#rooms.clear();
    this.#listeners.clear();
  }

  #expiry(key: string, room: Room, userId: number): TimerHandle {
    return this.#clock.setTimeout(() => this.#hide(key, room, userId, "expired"), this.expiryMs);
  }

  #hide(key: string, room: Room, userId: number, reason: "stop" | "expired"): void {
    const timer = room.typists.get(userId);
    if (timer !== undefined) this.#clock.clearTimeout(timer);
    room.typists.delete(userId);
    if (room.typists.size === 0 && this.#rooms.get(key) === room) this.#rooms.delete(key);
    this.#emit({ conversation: room.conversation, userId, typing: false, reason });
  }

  #emit(change: TypingChange): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(change);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }
}
