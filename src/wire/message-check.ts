/**
 * The message event checked by hand, for the hot path: most events are messages, and zod takes
 * several times longer on one. It accepts exactly what `eventSchemas.message` accepts, nested
 * records and every array element included (test/wire/message-check.test.ts mutates every field at
 * every depth and compares the two); anything it refuses goes through zod, which then says why.
 */
import type { Message } from "./records.ts";

/** A message event of the queue, as `eventSchemas.message` types it. */
export type QueueMessageEvent = {
  id: number;
  type: "message";
  message: Message;
  flags: string[];
  local_message_id?: string | undefined;
  [key: string]: unknown;
};

type Fields = Record<string, unknown>;
type Check = (v: unknown) => boolean;

/** As `z.looseObject` takes an object: not null, not an array. */
const record = (v: unknown): v is Fields => typeof v === "object" && v !== null && !Array.isArray(v);
const int: Check = (v) => Number.isSafeInteger(v);
const str: Check = (v) => typeof v === "string";
const bool: Check = (v) => typeof v === "boolean";
const optional = (v: unknown, check: Check): boolean => v === undefined || check(v);

/** As `z.array(item)`: every index, holes included (a hole reads as undefined). */
function arrayOf(v: unknown, item: Check): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) if (!item(v[i])) return false;
  return true;
}

const strings: Check = (v) => arrayOf(v, str);

/** An element of `display_recipient` in a direct message. */
const recipient: Check = (v) =>
  record(v) && int(v.id) && str(v.email) && str(v.full_name) && optional(v.is_mirror_dummy, bool);

const topicLink: Check = (v) => record(v) && str(v.text) && str(v.url);

const reaction: Check = (v) =>
  record(v) && str(v.emoji_name) && str(v.emoji_code) && str(v.reaction_type) && int(v.user_id);

// Made once: a closure per call would cost more than the checks themselves.
const topicLinks: Check = (v) => arrayOf(v, topicLink);
const reactions: Check = (v) => arrayOf(v, reaction);
const isArray: Check = (v) => Array.isArray(v);

function isMessage(m: unknown): m is Message {
  return (
    record(m) &&
    int(m.id) &&
    int(m.sender_id) &&
    str(m.sender_email) &&
    str(m.sender_full_name) &&
    optional(m.sender_realm_str, str) &&
    (m.avatar_url === null || optional(m.avatar_url, str)) &&
    str(m.client) &&
    str(m.content) &&
    optional(m.content_type, str) &&
    int(m.recipient_id) &&
    int(m.timestamp) &&
    (m.type === "stream" || m.type === "private") &&
    (typeof m.display_recipient === "string" || arrayOf(m.display_recipient, recipient)) &&
    optional(m.stream_id, int) &&
    str(m.subject) &&
    optional(m.topic_links, topicLinks) &&
    optional(m.is_me_message, bool) &&
    optional(m.reactions, reactions) &&
    optional(m.submessages, isArray) &&
    optional(m.flags, strings) &&
    optional(m.last_edit_timestamp, int) &&
    optional(m.last_moved_timestamp, int) &&
    optional(m.rendered_content, str)
  );
}

/** Whether `raw` is a message event that `eventSchemas.message` accepts. */
export function isMessageEvent(raw: unknown): raw is QueueMessageEvent {
  return (
    record(raw) &&
    raw.type === "message" &&
    int(raw.id) &&
    isMessage(raw.message) &&
    strings(raw.flags) &&
    optional(raw.local_message_id, str)
  );
}
