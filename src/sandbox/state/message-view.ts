/**
 * The message record as one viewer sees it (GET /messages, `message` events): Markdown or HTML,
 * the empty-topic display name, per-viewer recipient_id and placeholder emails.
 */
import { badRequest } from "../http/api-error.ts";
import type { MessageRecord, SandboxData, UserRecord } from "./data.ts";
import { isSubscribed, streamById } from "./streams.ts";
import { apiEmail, avatarUrl, userById } from "./users.ts";

export interface MessageViewOptions {
  applyMarkdown: boolean;
  clientGravatar: boolean;
  /** False: the empty topic reads as the realm's empty-topic display name. */
  allowEmptyTopicName: boolean;
}

/** The topic a client sees: `""` becomes the display name unless it declared it can cope. */
export function visibleTopic(data: SandboxData, topic: string, allowEmpty: boolean): string {
  return topic === "" && !allowEmpty ? data.realm.empty_topic_display_name : topic;
}

export function displayRecipient(data: SandboxData, msg: MessageRecord): string | Record<string, unknown>[] {
  if (msg.type === "stream") return streamById(data, msg.stream_id!)?.name ?? "";
  return msg.dm_user_ids.map((id) => {
    const u = userById(data, id)!;
    return { id: u.user_id, email: apiEmail(data, u), full_name: u.full_name, is_mirror_dummy: false };
  });
}

export function messageToApi(
  data: SandboxData,
  msg: MessageRecord,
  viewer: UserRecord | null,
  opts: MessageViewOptions,
): Record<string, unknown> {
  const sender = userById(data, msg.sender_id)!;
  const topic = (t: string) => visibleTopic(data, t, opts.allowEmptyTopicName);
  let recipientId = msg.recipient_id;
  // An incoming 1:1 DM names the conversation by the sender's personal recipient.
  if (msg.type === "private" && msg.dm_user_ids.length === 2 && viewer && viewer.user_id !== msg.sender_id) {
    recipientId = sender.recipient_id;
  }
  const out: Record<string, unknown> = {
    id: msg.id,
    sender_id: msg.sender_id,
    content: opts.applyMarkdown ? msg.rendered_content : msg.content,
    recipient_id: recipientId,
    timestamp: msg.timestamp,
    client: msg.client,
    subject: msg.type === "stream" ? topic(msg.topic) : "",
    topic_links: [],
    is_me_message: isMeMessage(msg.content),
    reactions: msg.reactions.map((r) => ({ ...r })),
    submessages: [],
    sender_full_name: sender.full_name,
    sender_email: apiEmail(data, sender),
    sender_realm_str: data.realm.string_id,
    display_recipient: displayRecipient(data, msg),
    type: msg.type,
    avatar_url: avatarUrl(data, viewer, sender, opts.clientGravatar),
    content_type: opts.applyMarkdown ? "text/html" : "text/x-markdown",
  };
  if (msg.type === "stream") out.stream_id = msg.stream_id;
  if (msg.edit_history.length > 0 && data.realm.allow_edit_history) {
    out.edit_history = msg.edit_history.map((e) => ({
      ...e,
      ...(e.topic !== undefined ? { topic: topic(e.topic) } : {}),
      ...(e.prev_topic !== undefined ? { prev_topic: topic(e.prev_topic) } : {}),
    }));
  }
  if (msg.last_edit_timestamp !== null) out.last_edit_timestamp = msg.last_edit_timestamp;
  if (msg.last_moved_timestamp !== null) out.last_moved_timestamp = msg.last_moved_timestamp;
  return out;
}

/**
 * The server's has_message_access: a direct message to whoever holds it; a channel's message to
 * anyone who may read a public channel, else to its subscribers (with protected history, only
 * those who also hold it). Holding a message of a private channel one left is not enough here,
 * though GET /messages without a narrow still lists it (it reads what the user holds).
 */
export function canAccessMessage(data: SandboxData, user: UserRecord, msg: MessageRecord): boolean {
  const holds = msg.flags[String(user.user_id)] !== undefined;
  if (msg.type === "private") return holds;
  const stream = streamById(data, msg.stream_id!);
  if (!stream) return false;
  if (!stream.invite_only && user.role !== 600) return true;
  const subscribed = isSubscribed(data, stream.stream_id, user.user_id);
  return stream.history_public_to_subscribers ? subscribed : holds && subscribed;
}

/** The message if it exists and the user may read it; otherwise "Invalid message(s)". */
export function accessMessage(data: SandboxData, user: UserRecord, id: number): MessageRecord {
  const msg = data.messages.find((m) => m.id === id);
  if (!msg || !canAccessMessage(data, user, msg)) throw badRequest("Invalid message(s)");
  return msg;
}

/** A user's flags on a message; messages read through channel history are read + historical. */
export function flagsOf(msg: MessageRecord, user: UserRecord): string[] {
  return msg.flags[String(user.user_id)] ?? ["read", "historical"];
}

/** Users who hold the message (a UserMessage row on the server): they get its events. */
export function holders(msg: MessageRecord): number[] {
  return Object.keys(msg.flags).map(Number);
}

/** Edit history snapshots rebuilt from the stored edits the way fill_edit_history_entries does. */
export function editSnapshots(
  data: SandboxData,
  msg: MessageRecord,
  allowEmptyTopic: boolean,
): Record<string, unknown>[] {
  const topic = (t: string) => visibleTopic(data, t, allowEmptyTopic);
  let content = msg.content;
  let rendered = msg.rendered_content;
  let currentTopic = msg.topic;
  const snapshots: Record<string, unknown>[] = [];
  for (const edit of msg.edit_history) {
    const snap: Record<string, unknown> = {
      timestamp: edit.timestamp,
      topic: topic(currentTopic),
      user_id: edit.user_id,
    };
    if (edit.prev_topic !== undefined) {
      currentTopic = edit.prev_topic;
      snap.prev_topic = topic(edit.prev_topic);
    }
    if (edit.prev_stream !== undefined) {
      snap.prev_stream = edit.prev_stream;
      snap.stream = edit.stream;
    }
    snap.content = content;
    snap.rendered_content = rendered;
    if (edit.prev_content !== undefined) {
      snap.prev_content = edit.prev_content;
      snap.prev_rendered_content = edit.prev_rendered_content;
      snap.content_html_diff = htmlDiff(edit.prev_rendered_content ?? "", rendered);
      content = edit.prev_content;
      rendered = edit.prev_rendered_content ?? "";
    }
    snapshots.push(snap);
  }
  snapshots.push({
    content,
    rendered_content: rendered,
    timestamp: msg.timestamp,
    topic: topic(currentTopic),
    user_id: msg.sender_id,
  });
  return snapshots.reverse();
}

const tokenize = (html: string) => html.match(/<[^>]*>|[^<\s]+|\s+/g) ?? [];
const MAX_TOKENS = 2000;

export function htmlDiff(oldHtml: string, newHtml: string): string {
  const a = tokenize(oldHtml);
  const b = tokenize(newHtml);
  if (a.length * b.length > MAX_TOKENS * MAX_TOKENS) {
    return `<div><span class="highlight_text_inserted">${newHtml}</span></div>`;
  }
  // lcs[i][j]: longest common subsequence of a[i..] and b[j..].
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: string[] = [];
  const isTag = (t: string) => t.startsWith("<");
  const mark = (cls: string, t: string) =>
    isTag(t) || t.trim() === "" ? t : `<span class="${cls}">${t}</span>`;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(b[j]!);
      i++;
      j++;
    } else if (j < b.length && (i >= a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      out.push(mark("highlight_text_inserted", b[j]!));
      j++;
    } else {
      const t = a[i]!;
      if (!isTag(t)) out.push(mark("highlight_text_deleted", t));
      i++;
    }
  }
  return `<div>${out.join("")}</div>`;
}

/** A status message ("/me waves"), as the server tells one: its text starts with "/me ". */
export const isMeMessage = (content: string): boolean => content.startsWith("/me ");
