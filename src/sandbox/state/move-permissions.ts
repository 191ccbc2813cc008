/**
 * Who may edit a message's content or move it to another topic or channel, and how long after its
 * sending, as the server decides it for PATCH /messages/{id} (refusals with the server's texts
 * and codes).
 */
import { ApiError, badRequest } from "../http/api-error.ts";
import { SYSTEM_GROUPS } from "../org/build-state.ts";
import {
  DEFAULT_CHANNEL_MOVERS,
  DEFAULT_MOVE_LIMIT_SECONDS,
  DEFAULT_TOPIC_MOVERS,
  DEFAULT_TOPIC_RESOLVERS,
  type MessageRecord,
  type RealmRecord,
  type SandboxData,
  type StreamRecord,
  type UserRecord,
} from "./data.ts";
import { administersChannel, canAccessContent } from "./streams.ts";
import { inGroupSetting } from "./users.ts";

/** The server's grace past a time limit, for a request sent just before it. */
const EDIT_LIMIT_BUFFER_SECONDS = 20;

/** Only the sender edits content, within `message_content_edit_limit_seconds` (plus the grace) if set. */
export function checkContentEdit(
  realm: RealmRecord,
  user: UserRecord,
  msg: MessageRecord,
  age: number,
): void {
  if (msg.sender_id !== user.user_id) throw badRequest("You don't have permission to edit this message");
  const limit = realm.message_content_edit_limit_seconds;
  if (typeof limit === "number" && age > limit + EDIT_LIMIT_BUFFER_SECONDS)
    throw badRequest("The time limit for editing this message has passed");
}

/**
 * A move to another topic, as the server allows it: by a member of the realm's
 * `can_move_messages_between_topics_group` (default everyone), or of the source or target
 * channel's `can_move_messages_within_channel_group` or administrators (and realm administrators),
 * within `move_messages_within_stream_limit_seconds` of sending (default 7 days) unless a moderator
 * or above.
 */
export function checkTopicMove(
  data: SandboxData,
  user: UserRecord,
  channels: StreamRecord[],
  age: number,
): void {
  const realm = data.realm;
  const withinChannel = (s: StreamRecord) =>
    user.role <= 200 ||
    administersChannel(data, user, s) ||
    inGroupSetting(data, s.can_move_messages_within_channel_group, user.user_id);
  if (
    !inSystemGroup(realm.can_move_messages_between_topics_group ?? DEFAULT_TOPIC_MOVERS, user.role) &&
    !channels.some(withinChannel)
  )
    throw badRequest("You don't have permission to edit this message");
  if (pastMoveLimit(realm.move_messages_within_stream_limit_seconds, user.role, age))
    throw badRequest("The time limit for editing this message's topic has passed.");
}

/** The prefix of a resolved topic. */
export const RESOLVED_PREFIX = "✔ ";

/**
 * Whether a topic change resolves or unresolves the topic, as the server tells them from other
 * moves: adding the prefix to the same name (`given` is the topic before truncation), or dropping
 * every leading `✔` and space.
 */
export function resolveChange(
  old: string,
  given: string,
  target: string,
): "resolved" | "unresolved" | undefined {
  const was = old.startsWith(RESOLVED_PREFIX);
  const is = target.startsWith(RESOLVED_PREFIX);
  if (is && !was && given.slice(RESOLVED_PREFIX.length) === old) return "resolved";
  if (was && !is && old.replace(/^[✔ ]+/u, "") === target) return "unresolved";
  return undefined;
}

/**
 * Resolving or unresolving a topic, as the server allows it: by a member of the realm's
 * `can_resolve_topics_group` (default everyone) or of the source or target channel's; no time limit.
 */
export function checkResolve(data: SandboxData, user: UserRecord, channels: StreamRecord[]): void {
  const realmGroup = data.realm.can_resolve_topics_group ?? DEFAULT_TOPIC_RESOLVERS;
  if (inSystemGroup(realmGroup, user.role)) return;
  if (channels.some((s) => inGroupSetting(data, s.can_resolve_topics_group, user.user_id))) return;
  throw badRequest("You don't have permission to resolve topics in this channel.");
}

/**
 * Who may move a message out of `from`, as the server allows it: an administrator, a member of the
 * realm's `can_move_messages_between_channels_group` (default members), the channel's
 * administrators, or its `can_move_messages_out_of_channel_group`.
 */
export function checkChannelMover(data: SandboxData, user: UserRecord, from: StreamRecord): void {
  const group = data.realm.can_move_messages_between_channels_group ?? DEFAULT_CHANNEL_MOVERS;
  if (
    user.role <= 200 ||
    inSystemGroup(group, user.role) ||
    administersChannel(data, user, from) ||
    inGroupSetting(data, from.can_move_messages_out_of_channel_group, user.user_id)
  )
    return;
  throw badRequest("You don't have permission to move this message");
}

/** A move to another channel within `move_messages_between_streams_limit_seconds` (default 7 days). */
export function checkChannelMoveTime(realm: RealmRecord, role: number, age: number): void {
  if (pastMoveLimit(realm.move_messages_between_streams_limit_seconds, role, age))
    throw badRequest("The time limit for editing this message's channel has passed");
}

function inSystemGroup(group: string, role: number): boolean {
  return role <= (SYSTEM_GROUPS.find((g) => g.name === group)?.maxRole ?? 0);
}

/** A limit as the realm states it: absent is the 7-day default, null is none. */
const limitOf = (limit: number | null | undefined) =>
  limit === undefined ? DEFAULT_MOVE_LIMIT_SECONDS : limit;

/** Past a move limit plus its grace; moderators and up never are. */
function pastMoveLimit(limit: number | null | undefined, role: number, age: number): boolean {
  const seconds = limitOf(limit);
  return seconds !== null && role > 300 && age > seconds + EDIT_LIMIT_BUFFER_SECONDS;
}

/**
 * Which of a channel's messages the user can read: all of them where its history is open to the
 * user, else the ones the user received.
 */
export function canReadHistoryOf(
  data: SandboxData,
  user: UserRecord,
  stream: StreamRecord,
): (m: MessageRecord) => boolean {
  const open = stream.history_public_to_subscribers && canAccessContent(data, user, stream);
  return (m) => open || m.flags[String(user.user_id)] !== undefined;
}

/**
 * A `change_all` move below moderators, as the server checks it: every message of the topic the
 * user may read (all of them where the channel's history is open to the user, else the ones the
 * user received) must be within the stricter of the limits the move touches (the topic's when the
 * topic changes, the channel's when `stream_id` is given). Otherwise 400
 * MOVE_MESSAGES_TIME_LIMIT_EXCEEDED, saying how many of the most recent ones may move and the
 * oldest of those, so that a `change_later` move from it goes.
 */
export function checkWholeTopicMove(
  data: SandboxData,
  user: UserRecord,
  msg: MessageRecord,
  stream: StreamRecord,
  moves: { topic: boolean; channel: boolean },
  now: number,
): void {
  if (user.role <= 300) return;
  const limits = [
    moves.topic ? limitOf(data.realm.move_messages_within_stream_limit_seconds) : null,
    moves.channel ? limitOf(data.realm.move_messages_between_streams_limit_seconds) : null,
  ].filter((l): l is number => l !== null);
  if (limits.length === 0) return;
  const deadline = Math.min(...limits) + EDIT_LIMIT_BUFFER_SECONDS;
  const openHistory = stream.history_public_to_subscribers && canAccessContent(data, user, stream);
  const visible = canReadHistoryOf(data, user, stream);
  const topic = msg.topic.toLowerCase();
  const inTopic = data.messages
    .filter((m) => m.stream_id === msg.stream_id && m.topic.toLowerCase() === topic && visible(m))
    .sort((a, b) => (openHistory ? a.id - b.id : a.timestamp - b.timestamp));
  const allowed = inTopic.filter((m) => now - m.timestamp < deadline);
  if (allowed.length === inTopic.length) return;
  throw new ApiError(
    400,
    "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED",
    `You only have permission to move the ${allowed.length}/${inTopic.length} most recent messages in this topic.`,
    {
      first_message_id_allowed_to_move: allowed[0]?.id ?? null,
      total_messages_in_topic: inTopic.length,
      total_messages_allowed_to_move: allowed.length,
    },
  );
}
