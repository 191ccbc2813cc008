/**
 * The one path every new message takes (HTTP, control.sendAs, scheduled delivery, reports,
 * Notification Bot DMs): read the `to` forms (see
 * docs/internals/server-behaviour.md#sending-messages), normalise and truncate as the server does,
 * validate, store with per-user flags, deliver to queues.
 */

import { featureLevels } from "../../wire/feature-levels.ts";
import { CUT_CONTENT_ENDING, strippedContent, truncate } from "../../wire/stored-content.ts";
import type { SandboxCore } from "../core.ts";
import { ApiError, badRequest } from "../http/api-error.ts";
import { defaultReadBySender } from "../http/server.ts";
import { deliverMessage } from "../queues/delivery.ts";
import { type MessageRecord, nextId, type SandboxData, type StreamRecord, type UserRecord } from "./data.ts";
import { escapeHtml } from "./escape-html.ts";
import { messageContext, renderMarkdown } from "./markdown.ts";
import { isSubscribed, streamById, streamByName, subscriberIds } from "./streams.ts";
import { apiEmail, userByDeliveryEmail, userById } from "./users.ts";

export interface SendTarget {
  type: "stream" | "private";
  stream?: StreamRecord;
  /** DM recipients (the sender may be among them). */
  recipients?: UserRecord[];
  topic: string;
}

export interface SendOptions {
  client: string;
  /** `undefined`: decided by the client name (see docs/internals/server-behaviour.md#client-names). */
  readBySender?: boolean | undefined;
  local?: { queueId: string; localId: string } | undefined;
  /** Skip the sender's channel permission check (Notification Bot, outgoing webhook replies). */
  trusted?: boolean;
  /** Only these recipients get the message unread; every other one gets it read. */
  unreadOnly?: ReadonlySet<number>;
}

export function streamDoesNotExist(ref: string | number): ApiError {
  return typeof ref === "number"
    ? new ApiError(400, "STREAM_DOES_NOT_EXIST", `Channel with ID '${ref}' does not exist`, {
        stream_id: ref,
      })
    : new ApiError(400, "STREAM_DOES_NOT_EXIST", `Channel '${escapeHtml(ref)}' does not exist`, {
        stream: escapeHtml(ref),
      });
}

/** Resolve a send's wire-form `type`, `to` and `topic` to its target; errors are the server's. */
export function resolveTarget(core: SandboxCore, rawType: string, rawTo: string, topic?: string): SendTarget {
  const data = core.data;
  const type = messageType(rawType);
  if (type === "stream") {
    const ref = parseStreamTo(rawTo);
    const stream = typeof ref === "number" ? streamById(data, ref) : streamByName(data, ref);
    if (!stream) throw streamDoesNotExist(ref);
    if (topic === undefined) throw badRequest("Missing topic");
    return { type, stream, topic: normalizeTopic(data, topic) };
  }
  const to = parseDirectTo(rawTo);
  if (to.length === 0) throw badRequest("Message must have recipients");
  const recipients = to.map((ref) => {
    const user = typeof ref === "number" ? userById(data, ref) : userByDeliveryEmail(data, ref);
    if (!user || (typeof ref === "string" && user.system_bot)) {
      throw badRequest(typeof ref === "number" ? `Invalid user ID ${ref}` : `Invalid email '${ref}'`);
    }
    return user;
  });
  return { type, recipients, topic: "" };
}

export function checkTopicPolicy(stream: StreamRecord, topic: string): void {
  if (topic === "" && stream.topics_policy === "disable_empty_topic") {
    throw badRequest("Sending messages to the general chat is not allowed in this channel.");
  }
  if (topic !== "" && stream.topics_policy === "empty_topic_only") {
    throw badRequest("Only the general chat topic is allowed in this channel.");
  }
}

function checkCanSend(core: SandboxCore, sender: UserRecord, stream: StreamRecord): void {
  const data = core.data;
  const subscribed = (u: UserRecord | undefined) =>
    u !== undefined && isSubscribed(data, stream.stream_id, u.user_id);
  const owner = sender.bot_owner_id === null ? undefined : userById(data, sender.bot_owner_id);
  const allowed =
    !stream.is_archived &&
    (subscribed(sender) ||
      (sender.is_bot && subscribed(owner)) ||
      (!stream.invite_only && sender.role !== 600));
  if (!allowed) throw badRequest(`Not authorized to send to channel '${escapeHtml(stream.name)}'`);
}

/** Validate, store and deliver one message; returns the stored record. */
export function sendMessage(
  core: SandboxCore,
  sender: UserRecord,
  target: SendTarget,
  rawContent: string,
  opts: SendOptions,
): MessageRecord {
  const data = core.data;
  const content = normalizeContent(rawContent);
  let recipientIds: number[];
  let recipientId: number;
  let dmUserIds: number[] = [];
  if (target.type === "stream") {
    const stream = target.stream!;
    if (!opts.trusted) checkCanSend(core, sender, stream);
    checkTopicPolicy(stream, target.topic);
    recipientIds = subscriberIds(data, stream.stream_id);
    recipientId = stream.recipient_id;
  } else {
    const people = target.recipients!;
    for (const p of people) {
      if (!p.is_active) throw badRequest(`'${apiEmail(data, p)}' is no longer using Zulip.`);
    }
    dmUserIds = [...new Set([sender.user_id, ...people.map((p) => p.user_id)])].sort((a, b) => a - b);
    recipientIds = dmUserIds;
    recipientId = directRecipientId(core, sender, dmUserIds);
  }
  const rendered = renderMarkdown(data, content, core.clock.now(), messageContext(core.url, sender));
  const readBySender = opts.readBySender ?? defaultReadBySender(opts.client);
  const flags: Record<string, string[]> = {};
  for (const id of new Set([...recipientIds, sender.user_id])) {
    const f: string[] = [];
    if ((id === sender.user_id && readBySender) || (opts.unreadOnly && !opts.unreadOnly.has(id)))
      f.push("read");
    if (rendered.mentionedUserIds.has(id)) f.push("mentioned");
    if (rendered.streamWildcard) f.push("stream_wildcard_mentioned");
    if (rendered.topicWildcard) f.push("topic_wildcard_mentioned");
    if (rendered.streamWildcard || rendered.topicWildcard) f.push("wildcard_mentioned");
    flags[String(id)] = f;
  }
  const msg: MessageRecord = {
    id: nextId(data, "message"),
    sender_id: sender.user_id,
    type: target.type,
    stream_id: target.type === "stream" ? target.stream!.stream_id : null,
    recipient_id: recipientId,
    dm_user_ids: dmUserIds,
    topic: target.type === "stream" ? target.topic : "",
    content,
    rendered_content: rendered.html,
    timestamp: core.clock.seconds(),
    client: opts.client,
    reactions: [],
    edit_history: [],
    last_edit_timestamp: null,
    last_moved_timestamp: null,
    flags,
  };
  data.messages.push(msg);
  deliverMessage(core, msg, opts.local);
  for (const hook of core.afterSend) hook(msg);
  return msg;
}

/** A DM from the Notification Bot to `to` (owner notices, failed scheduled sends). */
export function notifyByBot(core: SandboxCore, to: UserRecord, text: string): void {
  const bot = core.data.users.find((u) => u.system_bot);
  if (!bot) return;
  sendMessage(core, bot, { type: "private", recipients: [to], topic: "" }, text, {
    client: "Internal",
    trusted: true,
  });
}

/** 1:1 DMs use the partner's personal recipient (self-DMs the sender's); groups get their own. */
function directRecipientId(core: SandboxCore, sender: UserRecord, ids: number[]): number {
  const data = core.data;
  if (ids.length === 1) return sender.recipient_id;
  if (ids.length === 2) return userById(data, ids.find((id) => id !== sender.user_id)!)!.recipient_id;
  const key = ids.join(",");
  const existing = data.directGroups.find((g) => g.user_ids.join(",") === key);
  if (existing) return existing.recipient_id;
  const group = { recipient_id: nextId(data, "recipient"), user_ids: ids };
  data.directGroups.push(group);
  return group.recipient_id;
}

export const MAX_MESSAGE_LENGTH = 10000;
export const MAX_TOPIC_LENGTH = 60;

/**
 * Strip, map "(no topic)" and the empty-topic display name to "", and truncate. Below feature
 * level 334 there is no empty topic: those two are topics of those names, and "" is refused.
 */
export function normalizeTopic(data: SandboxData, raw: string): string {
  const topic = raw.trim();
  if (topic.includes("\u0000")) throw badRequest("Topic must not contain null bytes");
  if (data.realm.feature_level < featureLevels.emptyTopicValid) {
    if (topic === "") throw badRequest("Topic can't be empty!");
    return truncate(topic, MAX_TOPIC_LENGTH, "...");
  }
  if (topic === "(no topic)" || topic === data.realm.empty_topic_display_name) return "";
  return truncate(topic, MAX_TOPIC_LENGTH, "...");
}

/** Message content: trailing whitespace and leading newlines dropped; empty is an error. */
export function normalizeContent(raw: string): string {
  const body = strippedContent(raw);
  if (body === "") throw badRequest("Message must not be empty");
  if (body.includes("\u0000")) throw badRequest("Message must not contain null bytes");
  return truncate(body, MAX_MESSAGE_LENGTH, CUT_CONTENT_ENDING);
}

const NOT_JSON = Symbol("not JSON");

/**
 * A `to` as the server's JSON decoding types it, for its `isinstance(x, int)` checks: a number
 * written with a fraction or an exponent (`1.0`, `1e2`) is a float, not an id (here null, which
 * every check refuses as it refuses a float), and a boolean is an int (Python's bool is one), so
 * `true` is id 1 and `false` id 0, at the top or as a list's element.
 */
function asPythonReadsIt(raw: string): unknown {
  try {
    JSON.parse(raw);
  } catch {
    return NOT_JSON;
  }
  // Outside string literals, each number token with a fraction or an exponent becomes null.
  const floatsNulled = raw.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (token) =>
    token.startsWith('"') || !/[.eE]/.test(token) ? token : "null",
  );
  const asInt = (v: unknown) => (typeof v === "boolean" ? Number(v) : v);
  const data: unknown = JSON.parse(floatsNulled);
  return Array.isArray(data) ? data.map(asInt) : asInt(data);
}

/** A stream `to`: a raw name, a JSON string, a JSON int id, or a one-element JSON list. */
export function parseStreamTo(raw: string): string | number {
  let data = asPythonReadsIt(raw);
  if (data === NOT_JSON) return raw;
  if (Array.isArray(data)) {
    if (data.length !== 1) throw badRequest("Expected exactly one channel");
    data = data[0];
  }
  if (typeof data === "string") return data;
  if (typeof data === "number" && Number.isInteger(data)) return data;
  throw badRequest("Invalid data type for channel");
}

/** DM recipients: a JSON list of ids or of emails (not mixed), a JSON string, or comma-separated emails. */
export function parseDirectTo(raw: string): number[] | string[] {
  let data = asPythonReadsIt(raw);
  if (data === NOT_JSON) data = raw;
  if (typeof data === "string") data = data.split(",");
  if (!Array.isArray(data)) throw badRequest("Invalid data type for recipients");
  if (data.length === 0) return [];
  // The first element decides: emails, ids, or neither (a float, null, a list or an object).
  if (typeof data[0] !== "string" && !Number.isInteger(data[0])) {
    throw badRequest("Invalid data type for recipients");
  }
  const ids = typeof data[0] === "number";
  if (!data.every((v) => (ids ? Number.isInteger(v) : typeof v === "string"))) {
    throw badRequest("Recipient lists may contain emails or user IDs, but not both.");
  }
  if (ids) return [...new Set(data as number[])];
  return [...new Set((data as string[]).map((e) => e.trim()).filter((e) => e !== ""))];
}

/** Normalise the `type` of a message: direct→private, channel→stream. */
export function messageType(raw: string): "stream" | "private" {
  if (raw === "stream" || raw === "channel") return "stream";
  if (raw === "private" || raw === "direct") return "private";
  throw badRequest("Invalid type");
}
