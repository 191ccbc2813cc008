/**
 * PATCH /messages/{id} (content, topic and channel edits with stored edit history),
 * DELETE /messages/{id} and GET /messages/{id}/history (reactions are in reactions.ts).
 */
import { createHash } from "node:crypto";
import { rstripped } from "../../wire/stored-content.ts";
import type { SandboxCore } from "../core.ts";
import { badRequest } from "../http/api-error.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { type EventBody, emitToUsers } from "../queues/emit.ts";
import type { EditRecord, MessageRecord, SandboxData, UserRecord } from "../state/data.ts";
import { messageContext, renderMarkdown } from "../state/markdown.ts";
import { moveRows } from "../state/message-moves.ts";
import { accessMessage, editSnapshots, holders, isMeMessage, visibleTopic } from "../state/message-view.ts";
import { noticeMove } from "../state/move-notices.ts";
import {
  canReadHistoryOf,
  checkChannelMover,
  checkChannelMoveTime,
  checkContentEdit,
  checkResolve,
  checkTopicMove,
  checkWholeTopicMove,
  RESOLVED_PREFIX,
  resolveChange,
} from "../state/move-permissions.ts";
import { noticeResolve } from "../state/resolve-notice.ts";
import {
  checkTopicPolicy,
  normalizeContent,
  normalizeTopic,
  streamDoesNotExist,
} from "../state/send-message.ts";
import { canAccessContent, streamById, subscriberIds } from "../state/streams.ts";
import { userById } from "../state/users.ts";

const MODES = ["change_one", "change_later", "change_all"] as const;
/** The feature level that brought `prev_content_sha256` (Zulip 11.0). */
const PREV_CONTENT_FL = 379;

const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex");

function editMessage(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const data = core.data;
  const id = Number(ctx.path.message_id);
  // Read in the server's parameter order: the first invalid one is the error.
  const contentRaw = params.str("content");
  // Before feature level 379 the server does not know it: reported as ignored.
  const prevSha = data.realm.feature_level >= PREV_CONTENT_FL ? params.str("prev_content_sha256") : undefined;
  const mode = params.literal("propagate_mode", MODES) ?? "change_one";
  const notifyNew = params.bool("send_notification_to_new_thread") ?? true;
  const notifyOld = params.bool("send_notification_to_old_thread") ?? false;
  const streamId = params.int("stream_id");
  const topicRaw = params.str("topic", { aliases: ["subject"] });
  const msg = accessMessage(data, user, id);
  // A stale edit (the message changed since the client read it) is refused, whatever it changes.
  if (prevSha !== undefined && sha256Hex(msg.content) !== prevSha)
    throw badRequest("'prev_content_sha256' value does not match the expected value.");
  const now = core.clock.seconds();
  const age = now - msg.timestamp;
  if (contentRaw !== undefined) checkContentEdit(data.realm, user, msg, age);
  // The server reads a topic equal to the current one as no topic given.
  const given = topicRaw === undefined ? undefined : normalizeTopic(data, topicRaw);
  const newTopic = given === msg.topic ? undefined : given;
  checkPayload(msg, { content: contentRaw, topic: newTopic, streamId, mode });
  const topicChanged = newTopic !== undefined;
  // The server reads the target channel before it checks who may move (a missing one is named first).
  const newStream = streamId === undefined ? undefined : streamById(data, streamId);
  if (streamId !== undefined && (!newStream || !canAccessContent(data, user, newStream))) {
    throw streamDoesNotExist(streamId);
  }
  const source = msg.type === "stream" ? streamById(data, msg.stream_id!)! : undefined;
  const channels = source && newStream ? [source, newStream] : source ? [source] : [];
  // Resolving (or unresolving) is its own permission, with no time limit.
  const resolve = newTopic === undefined ? undefined : resolveChange(msg.topic, topicRaw!.trim(), newTopic);
  if (source && resolve) checkResolve(data, user, channels);
  else if (source && topicChanged) checkTopicMove(data, user, channels, age);
  if (source && streamId !== undefined) {
    checkChannelMover(data, user, source);
    checkChannelMoveTime(data.realm, user.role, age);
  }
  if (source && !resolve && mode === "change_all" && (topicChanged || streamId !== undefined)) {
    const moves = { topic: topicChanged, channel: streamId !== undefined };
    checkWholeTopicMove(data, user, msg, source, moves, now);
  }
  const streamChanged = newStream !== undefined && newStream.stream_id !== msg.stream_id;
  if (streamChanged || topicChanged)
    checkTopicPolicy(newStream ?? streamById(data, msg.stream_id!)!, newTopic ?? msg.topic);
  // Edited to nothing but whitespace, the message is kept saying "(deleted)" (a send is refused).
  const content =
    contentRaw === undefined
      ? undefined
      : normalizeContent(rstripped(contentRaw) === "" ? "(deleted)" : contentRaw);
  const contentChanged = content !== undefined && content !== msg.content;
  if (!contentChanged && !topicChanged && !streamChanged) return {};

  const moved = topicChanged || streamChanged ? movedMessages(data, user, msg, mode, streamChanged) : [msg];
  const orig = { ...msg };
  for (const m of moved) {
    const edit: EditRecord = { user_id: user.user_id, timestamp: now };
    if (m === msg && contentChanged) {
      edit.prev_content = m.content;
      edit.prev_rendered_content = m.rendered_content;
      const rendered = renderMarkdown(
        data,
        content,
        core.clock.now(),
        messageContext(core.url, userById(data, msg.sender_id)),
      );
      m.content = content;
      m.rendered_content = rendered.html;
      m.last_edit_timestamp = now;
      for (const uid of holders(m)) {
        const flags = m.flags[String(uid)]!.filter((f) => f !== "mentioned");
        if (rendered.mentionedUserIds.has(uid)) flags.push("mentioned");
        m.flags[String(uid)] = flags;
      }
    }
    if (topicChanged) {
      edit.prev_topic = m.topic;
      edit.topic = newTopic;
      m.topic = newTopic;
    }
    if (streamChanged) {
      edit.prev_stream = m.stream_id!;
      edit.stream = newStream.stream_id;
      m.stream_id = newStream.stream_id;
      m.recipient_id = newStream.recipient_id;
    }
    if (topicChanged || streamChanged) m.last_moved_timestamp = now;
    m.edit_history.unshift(edit);
  }
  const event: Record<string, unknown> & { type: string } = {
    type: "update_message",
    user_id: user.user_id,
    edit_timestamp: now,
    message_id: msg.id,
    message_ids: moved.map((m) => m.id).sort((a, b) => a - b),
    rendering_only: false,
  };
  if (msg.type === "stream") event.stream_id = orig.stream_id;
  if (contentChanged) {
    Object.assign(event, {
      orig_content: orig.content,
      orig_rendered_content: orig.rendered_content,
      content: msg.content,
      rendered_content: msg.rendered_content,
      is_me_message: isMeMessage(msg.content),
    });
  }
  if (topicChanged || streamChanged) {
    Object.assign(event, {
      stream_name: streamById(data, orig.stream_id!)?.name ?? "",
      propagate_mode: mode,
      orig_subject: orig.topic,
      subject: msg.topic,
      topic_links: [],
    });
    if (streamChanged) event.new_stream_id = newStream.stream_id;
  }
  const from = msg.type === "stream" ? streamById(data, orig.stream_id!) : undefined;
  // Moved to another channel: rows change hands, and who can no longer read them is told of a deletion.
  const lost = streamChanged && from ? moveRows(data, moved, from, newStream) : [];
  if (lost.length > 0) emitDeletion(core, lost, orig, event.message_ids as number[]);
  // The edit goes to the messages' holders and, where history is shared, to the channel's subscribers.
  const recipients = new Set(moved.flatMap(holders));
  if (from?.history_public_to_subscribers)
    for (const id of subscriberIds(data, from.stream_id)) recipients.add(id);
  for (const id of lost) recipients.delete(id);
  emitToUsers(core, recipients, event, (queue, ev) => {
    ev.flags = msg.flags[String(queue.options.userId)] ?? [];
    if (!queue.options.capabilities.empty_topic_name && ev.orig_subject !== undefined) {
      ev.orig_subject = visibleTopic(data, ev.orig_subject as string, false);
      ev.subject = visibleTopic(data, ev.subject as string, false);
    }
    return ev;
  });
  // The server posts the notice only for an edit of the topic alone.
  if (resolve && from && streamId === undefined && contentRaw === undefined)
    noticeResolve(core, user, from, msg.topic, resolve, (m) => deleteMessage(core, m));
  if (from && (topicChanged || streamChanged)) {
    noticeMove(core, {
      by: user,
      moved,
      target: msg,
      from,
      to: newStream ?? from,
      oldTopic: orig.topic,
      newTopic: msg.topic,
      wholeTopic: mode === "change_all",
      resolveOnly: resolve !== undefined,
      notifyOld,
      notifyNew,
    });
  }
  return {};
}

/** The server's checks of what an edit asks for, before any permission to move. */
function checkPayload(
  msg: MessageRecord,
  edit: { content?: string; topic?: string; streamId?: number; mode: (typeof MODES)[number] },
): void {
  const { content, topic, streamId, mode } = edit;
  if (content === undefined && topic === undefined && streamId === undefined)
    throw badRequest("Nothing to change");
  if (msg.type === "private" && streamId !== undefined)
    throw badRequest("Direct messages cannot be moved to channels.");
  if (msg.type === "private" && topic !== undefined) throw badRequest("Direct messages cannot have topics.");
  if (mode !== "change_one" && topic === undefined && streamId === undefined)
    throw badRequest("Invalid propagate_mode without topic edit");
  if (topic === RESOLVED_PREFIX.trim() || topic === `${RESOLVED_PREFIX}general chat`)
    throw badRequest("General chat cannot be marked as resolved");
  if (streamId !== undefined && content !== undefined)
    throw badRequest("Cannot change message content while changing channel");
}

/**
 * The messages a move takes, as the server picks them: the named one and, past `change_one`, the
 * topic's others (its name matched whatever the case; `change_later`: the ones after it), of which
 * a move to another channel takes only those the mover can read.
 */
function movedMessages(
  data: SandboxData,
  user: UserRecord,
  msg: MessageRecord,
  mode: (typeof MODES)[number],
  toOtherChannel: boolean,
): MessageRecord[] {
  if (mode === "change_one") return [msg];
  const topic = msg.topic.toLowerCase();
  const readable = canReadHistoryOf(data, user, streamById(data, msg.stream_id!)!);
  return data.messages.filter(
    (m) =>
      m === msg ||
      (m.stream_id === msg.stream_id &&
        m.topic.toLowerCase() === topic &&
        (mode === "change_all" || m.id > msg.id) &&
        (!toOtherChannel || readable(m))),
  );
}

/** Delete a message and tell everyone who held it. */
function deleteMessage(core: SandboxCore, msg: MessageRecord): void {
  core.data.messages = core.data.messages.filter((m) => m !== msg);
  emitDeletion(core, holders(msg), msg, [msg.id]);
}

/**
 * Tell `users` that messages `ids` of `where`'s conversation are gone: one event with `message_ids`
 * for a queue that declared bulk_message_deletion, else one event per message with `message_id`.
 */
function emitDeletion(
  core: SandboxCore,
  users: Iterable<number>,
  where: Pick<MessageRecord, "type" | "stream_id" | "topic">,
  ids: readonly number[],
): void {
  const data = core.data;
  const base: EventBody = { type: "delete_message", message_type: where.type };
  if (where.type === "stream") Object.assign(base, { stream_id: where.stream_id, topic: where.topic });
  const targets = new Set(users);
  for (const queue of core.queues.all()) {
    if (!targets.has(queue.options.userId) || !queue.accepts("delete_message")) continue;
    const caps = queue.options.capabilities;
    const ev = structuredClone(base);
    if (ev.topic !== undefined) ev.topic = visibleTopic(data, ev.topic as string, caps.empty_topic_name);
    if (caps.bulk_message_deletion) queue.push({ ...ev, message_ids: [...ids] });
    else for (const id of ids) queue.push({ ...ev, message_id: id });
  }
  core.changed();
}

export const messageEditRoutes = [
  route("/messages/{message_id:int}", {
    PATCH: endpoint(editMessage),
    DELETE: endpoint(({ core, user, path }) => {
      const msg = accessMessage(core.data, user, Number(path.message_id));
      if (msg.sender_id !== user.user_id && user.role > 200) {
        throw badRequest("You don't have permission to delete this message");
      }
      deleteMessage(core, msg);
      return {};
    }),
  }),
  route("/messages/{message_id:int}/history", {
    GET: endpoint(({ core, user, params, path }) => {
      const allowEmpty = params.bool("allow_empty_topic_name") ?? false;
      if (!core.data.realm.allow_edit_history)
        throw badRequest("Message edit history is disabled in this organization");
      const msg = accessMessage(core.data, user, Number(path.message_id));
      return { message_history: editSnapshots(core.data, msg, allowEmpty) };
    }),
  }),
];
