/**
 * Where each routing-relevant fact lives in each event type (NOTES §4, §14): the topic is
 * `subject` on messages, `subject`/`orig_subject` on update_message and `topic` on typing and
 * delete_message; a DM is `type: "private"` on messages but `message_type: "direct"` on typing.
 * Filters and conversation keys read events only through these functions.
 */
import type { EventMap, ServerEvent } from "../wire/events.ts";

type Of<T extends keyof EventMap> = EventMap[T];

export interface ChannelRef {
  ids: number[];
  names: string[];
}

export function channelOf(event: ServerEvent): ChannelRef | undefined {
  switch (event.type) {
    case "message": {
      const m = (event as Of<"message">).message;
      if (m.type !== "stream") return undefined;
      return {
        ids: defined([m.stream_id]),
        names: typeof m.display_recipient === "string" ? [m.display_recipient] : [],
      };
    }
    case "update_message": {
      const e = event as Of<"update_message">;
      if (e.stream_id === undefined) return undefined;
      return { ids: defined([e.stream_id, e.new_stream_id]), names: defined([e.stream_name]) };
    }
    case "delete_message":
    case "typing": {
      const id = (event as Of<"delete_message"> | Of<"typing">).stream_id;
      return id === undefined ? undefined : { ids: [id], names: [] };
    }
    default:
      return typeof event.stream_id === "number" ? { ids: [event.stream_id], names: [] } : undefined;
  }
}

/** The topic(s) an event is about: both old and new topic for a move; none for DMs. */
export function topicsOf(event: ServerEvent): string[] {
  switch (event.type) {
    case "message": {
      const m = (event as Of<"message">).message;
      return m.type === "stream" ? [m.subject] : [];
    }
    case "update_message": {
      const e = event as Of<"update_message">;
      return defined([e.subject, e.orig_subject]);
    }
    case "delete_message":
    case "typing":
      return defined([(event as Of<"delete_message"> | Of<"typing">).topic]);
    default:
      return typeof event.topic === "string" ? [event.topic] : [];
  }
}

export interface SenderRef {
  ids: number[];
  emails: string[];
}

/** Who caused the event: the sender, editor, reacting or typing user. */
export function senderOf(event: ServerEvent): SenderRef {
  switch (event.type) {
    case "message": {
      const m = (event as Of<"message">).message;
      return { ids: [m.sender_id], emails: [m.sender_email] };
    }
    case "update_message": {
      const id = (event as Of<"update_message">).user_id;
      return { ids: id === null ? [] : [id], emails: [] };
    }
    case "reaction": {
      const e = event as Of<"reaction">;
      return { ids: [e.user_id], emails: defined([e.user?.email]) };
    }
    case "typing": {
      const e = event as Of<"typing">;
      return { ids: [e.sender.user_id], emails: [e.sender.email] };
    }
    case "typing_edit_message":
      return { ids: [(event as Of<"typing_edit_message">).sender_id], emails: [] };
    default:
      return { ids: typeof event.sender_id === "number" ? [event.sender_id] : [], emails: [] };
  }
}

/** `true` for a direct message, `false` for a channel message, `undefined` when neither applies. */
export function isDirectEvent(event: ServerEvent): boolean | undefined {
  switch (event.type) {
    case "message":
      return (event as Of<"message">).message.type === "private";
    case "update_message":
      return (event as Of<"update_message">).stream_id === undefined;
    case "delete_message":
      return (event as Of<"delete_message">).message_type === "private";
    case "typing":
      return (event as Of<"typing">).message_type === "direct";
    default:
      return undefined;
  }
}

export function flagsOf(event: ServerEvent): readonly string[] {
  const flags = event.flags;
  return Array.isArray(flags) ? flags.filter((f): f is string => typeof f === "string") : [];
}

export function contentOf(event: ServerEvent): string | undefined {
  if (event.type === "message") return (event as Of<"message">).message.content;
  return typeof event.content === "string" ? event.content : undefined;
}

export function opOf(event: ServerEvent): string | undefined {
  return "op" in event && typeof event.op === "string" ? event.op : undefined;
}

function defined<T>(values: Array<T | undefined>): T[] {
  return values.filter((v): v is T => v !== undefined);
}
