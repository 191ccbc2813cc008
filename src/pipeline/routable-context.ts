/** What the router reads of a context (composer.ts, filters.ts). */
import type { Logger } from "../api/logger.ts";
import type { AnyEvent } from "../wire/events.ts";

/** The least a context must carry for the router, which passes a richer one through untouched. */
export interface RoutableContext {
  /**
   * The event being handled: a typed event, or an unknown one (a type this version does not know,
   * or a known type that failed its schema: see `eventIssue`). Routes narrow it by their type.
   */
  event: AnyEvent;
  /** The bot: its name in the config, its user id and email, and its full name once known. */
  bot: { name: string; userId: number; email: string; fullName?: string };
  /** Aborted when the handler times out or the bot shuts down. */
  signal: AbortSignal;
  log: Logger;
  /**
   * Look up a channel's name by id, so `channel: "name"` filters also match events that carry
   * only `stream_id` (delete_message, typing). Without it those match only by id.
   */
  channelName?: (channelId: number) => string | undefined;
  /**
   * Set when the event has a known type but failed that type's schema (`parseEvent`'s `issue`).
   * Typed routes such as `on("message")` and `on("*")` skip such an event; `on("unknown")` sees it.
   */
  eventIssue?: string;
}
