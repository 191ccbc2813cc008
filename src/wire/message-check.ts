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

/** An empty array: what most messages carry in their lists, tested before any call. */
const empty = (v: unknown): boolean => Array.isArray(v) && v.length === 0;

/** `undefined`, or a string. */
const optionalStr = (v: unknown): boolean => v === undefined || typeof v === "string";

// The checks are written out inline, not composed from the helpers above: this runs for every
// message of a poll's answer, thousands at once in a burst, mostly before the JIT has optimized
// it, where each call costs more than the test it makes.
function isMessage(m: unknown): m is Message {
  if (!record(m)) return false;
  const to = m.display_recipient;
  return (
    Number.isSafeInteger(m.id) &&
    Number.isSafeInteger(m.sender_id) &&
    typeof m.sender_email === "string" &&
    typeof m.sender_full_name === "string" &&
    optionalStr(m.sender_realm_str) &&
    (m.avatar_url === null || optionalStr(m.avatar_url)) &&
    typeof m.client === "string" &&
    typeof m.content === "string" &&
    optionalStr(m.content_type) &&
    Number.isSafeInteger(m.recipient_id) &&
    Number.isSafeInteger(m.timestamp) &&
    (m.type === "stream" || m.type === "private") &&
    (typeof to === "string" || arrayOf(to, recipient)) &&
    (m.stream_id === undefined || Number.isSafeInteger(m.stream_id)) &&
    typeof m.subject === "string" &&
    (m.topic_links === undefined || empty(m.topic_links) || topicLinks(m.topic_links)) &&
    (m.is_me_message === undefined || typeof m.is_me_message === "boolean") &&
    (m.reactions === undefined || empty(m.reactions) || reactions(m.reactions)) &&
    (m.submessages === undefined || Array.isArray(m.submessages)) &&
    (m.flags === undefined || empty(m.flags) || strings(m.flags)) &&
    (m.last_edit_timestamp === undefined || Number.isSafeInteger(m.last_edit_timestamp)) &&
    (m.last_moved_timestamp === undefined || Number.isSafeInteger(m.last_moved_timestamp)) &&
    optionalStr(m.rendered_content)
  );
}

/** Whether `raw` is a message event that `eventSchemas.message` accepts. */
export function isMessageEvent(raw: unknown): raw is QueueMessageEvent {
  return (
    record(raw) &&
    raw.type === "message" &&
    Number.isSafeInteger(raw.id) &&
    isMessage(raw.message) &&
    (empty(raw.flags) || strings(raw.flags)) &&
    optionalStr(raw.local_message_id)
  );
}
