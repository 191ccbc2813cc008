import type { Logger } from "../api/logger.ts";
import type { ServerEvent } from "../wire/events.ts";

/**
 * The least a context must carry for the router. The runtime builds a richer context (client,
 * state, reply helpers) and the router passes it through untouched: `Composer<C>` is generic over
 * any `C extends RoutableContext`.
 *
 * @example
 * ```ts
 * const ctx: RoutableContext = {
 *   event, signal, log,
 *   bot: { name: "greeter", userId: 8, email: "greeter-bot@example.org" },
 * };
 * await composer.dispatch(ctx);
 * ```
 */
export interface RoutableContext {
  /** The event being handled. For a known `type` it must have passed its schema (see `eventIssue`). */
  event: ServerEvent;
  /** The bot handling it. */
  bot: { name: string; userId: number; email: string };
  /** Aborted when the handler times out or the bot shuts down. */
  signal: AbortSignal;
  log: Logger;
  /**
   * Look up a channel's name by id, so `channel: "name"` filters also match events that carry
   * only `stream_id` (delete_message, typing). Without it those match only by id.
   */
  channelName?: (streamId: number) => string | undefined;
  /**
   * Set when the event has a known type but failed that type's schema (`parseEvent`'s `issue`).
   * Typed routes such as `on("message")` skip such an event; `on("*")` still sees it.
   */
  eventIssue?: string;
}
