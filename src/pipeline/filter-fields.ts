/**
 * Where each fact a filter routes by lives in each event type (see filters.ts): read from the
 * typed event when it passed its schema, else by the generic field name.
 */
import { type AnyEvent, isTypedEvent, type ServerEvent } from "../wire/events.ts";
import type { RoutableContext } from "./routable-context.ts";

// Where each routing-relevant fact lives in each event type: the topic is `subject` on messages,
// `subject`/`orig_subject` on update_message and `topic` on typing and delete_message; a direct
// message is `type: "private"` on messages but `message_type: "direct"` on typing (the server
// spells the two differently). Other events, and unknown ones, are read by the generic field name.

/** The event, if it is typed (a known type that passed its schema, or bothost's own). */
function typedOf(ctx: RoutableContext): ServerEvent | undefined {
  return isTypedEvent(ctx.event, ctx.eventIssue) ? ctx.event : undefined;
}

/** Any event's fields, for the generic reading. */
const fieldsOf = (event: AnyEvent): Readonly<Record<string, unknown>> => event;

interface ChannelRef {
  ids: number[];
  names: string[];
}

export function channelOf(ctx: RoutableContext): ChannelRef | undefined {
  const event = typedOf(ctx);
  switch (event?.type) {
    case "message": {
      const m = event.message;
      if (m.type !== "stream") return undefined;
      return {
        ids: defined([m.stream_id]),
        names: typeof m.display_recipient === "string" ? [m.display_recipient] : [],
      };
    }
    case "update_message":
      if (event.stream_id === undefined) return undefined;
      return { ids: defined([event.stream_id, event.new_stream_id]), names: defined([event.stream_name]) };
    case "delete_message":
    case "typing":
      return event.stream_id === undefined ? undefined : { ids: [event.stream_id], names: [] };
    default: {
      const id = fieldsOf(ctx.event).stream_id;
      return typeof id === "number" ? { ids: [id], names: [] } : undefined;
    }
  }
}

/** The topic(s) an event is about: both old and new topic for a move; none for DMs. */
export function topicsOf(ctx: RoutableContext): string[] {
  const event = typedOf(ctx);
  switch (event?.type) {
    case "message":
      return event.message.type === "stream" ? [event.message.subject] : [];
    case "update_message":
      return defined([event.subject, event.orig_subject]);
    case "delete_message":
    case "typing":
      return defined([event.topic]);
    default: {
      const topic = fieldsOf(ctx.event).topic;
      return typeof topic === "string" ? [topic] : [];
    }
  }
}

interface SenderRef {
  ids: number[];
  emails: string[];
}

/** Who caused the event: the sender, editor, reacting or typing user. */
export function senderOf(ctx: RoutableContext): SenderRef {
  const event = typedOf(ctx);
  switch (event?.type) {
    case "message":
      return { ids: [event.message.sender_id], emails: [event.message.sender_email] };
    case "update_message":
      return { ids: event.user_id === null ? [] : [event.user_id], emails: [] };
    case "reaction":
      return { ids: [event.user_id], emails: defined([event.user?.email]) };
    case "typing":
      return { ids: [event.sender.user_id], emails: [event.sender.email] };
    case "typing_edit_message":
      return { ids: [event.sender_id], emails: [] };
    default: {
      const id = fieldsOf(ctx.event).sender_id;
      return { ids: typeof id === "number" ? [id] : [], emails: [] };
    }
  }
}

/** `true` for a direct message, `false` for a channel message, `undefined` when neither applies. */
export function isDirectEvent(ctx: RoutableContext): boolean | undefined {
  const event = typedOf(ctx);
  switch (event?.type) {
    case "message":
      return event.message.type === "private";
    case "update_message":
      return event.stream_id === undefined;
    case "delete_message":
      return event.message_type === "private";
    case "typing":
      return event.message_type === "direct";
    default:
      return undefined;
  }
}

export function flagsOf(ctx: RoutableContext): readonly string[] {
  const flags = fieldsOf(ctx.event).flags;
  return Array.isArray(flags) ? flags.filter((f): f is string => typeof f === "string") : [];
}

export function contentOf(ctx: RoutableContext): string | undefined {
  const event = typedOf(ctx);
  if (event?.type === "message") return event.message.content;
  const content = fieldsOf(ctx.event).content;
  return typeof content === "string" ? content : undefined;
}

export function opOf(ctx: RoutableContext): string | undefined {
  const op = fieldsOf(ctx.event).op;
  return typeof op === "string" ? op : undefined;
}

function defined<T>(values: Array<T | undefined>): T[] {
  return values.filter((v): v is T => v !== undefined);
}
