import type { EventMap, ServerEvent } from "../wire/events.ts";

/**
 * True when the bot itself caused `event`: its own message (the server echoes a bot's messages
 * into its own queue, NOTES §4.2), its own edit, reaction or typing notice. The runtime drops
 * these before routing so a bot never answers itself in a loop.
 *
 * @example
 * ```ts
 * if (isOwnMessage(event, me.user_id)) continue;
 * ```
 */
export function isOwnMessage(event: ServerEvent, botUserId: number): boolean {
  switch (event.type) {
    case "message":
      return (event as EventMap["message"]).message.sender_id === botUserId;
    case "update_message":
      return (event as EventMap["update_message"]).user_id === botUserId;
    case "reaction":
      return (event as EventMap["reaction"]).user_id === botUserId;
    case "typing":
      return (event as EventMap["typing"]).sender.user_id === botUserId;
    case "typing_edit_message":
      return (event as EventMap["typing_edit_message"]).sender_id === botUserId;
    default:
      return false;
  }
}
