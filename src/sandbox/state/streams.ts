/**
 * Channels and subscriptions: lookups, who may see or read what, the Channel and Subscription
 * wire records, and (un)subscribing with `subscription` events to the user and peer_add /
 * peer_remove to everyone else who can see the channel.
 */

import type { SandboxCore } from "../core.ts";
import { addSubscription } from "../org/build-state.ts";
import { emitToUsers } from "../queues/emit.ts";
import type { SandboxData, StreamRecord, SubscriptionRecord, UserRecord } from "./data.ts";
import { renderDescription } from "./markdown.ts";
import { inGroupSetting } from "./users.ts";

export function streamById(data: SandboxData, id: number): StreamRecord | undefined {
  return data.streams.find((s) => s.stream_id === id);
}

export function streamByName(data: SandboxData, name: string): StreamRecord | undefined {
  const key = name.toLowerCase();
  return data.streams.find((s) => s.name.toLowerCase() === key);
}

export function subscription(
  data: SandboxData,
  streamId: number,
  userId: number,
): SubscriptionRecord | undefined {
  return data.subscriptions.find((s) => s.stream_id === streamId && s.user_id === userId && s.active);
}

export function isSubscribed(data: SandboxData, streamId: number, userId: number): boolean {
  return subscription(data, streamId, userId) !== undefined;
}

/** Active user ids subscribed to a channel, sorted. */
export function subscriberIds(data: SandboxData, streamId: number): number[] {
  const active = new Set(data.users.filter((u) => u.is_active).map((u) => u.user_id));
  return data.subscriptions
    .filter((s) => s.stream_id === streamId && s.active && active.has(s.user_id))
    .map((s) => s.user_id)
    .sort((a, b) => a - b);
}

/** Public to every non-guest member (web-public channels are public too). */
export function isPublic(stream: StreamRecord): boolean {
  return !stream.invite_only;
}

/** May the user read the channel's messages? */
export function canAccessContent(data: SandboxData, user: UserRecord, stream: StreamRecord): boolean {
  return isSubscribed(data, stream.stream_id, user.user_id) || (isPublic(stream) && user.role !== 600);
}

/** May the user see the channel exists (name, description)? Administrators see every channel. */
export function canAccessMetadata(data: SandboxData, user: UserRecord, stream: StreamRecord): boolean {
  return user.role <= 200 || canAccessContent(data, user, stream);
}

/**
 * Is the user the channel's administrator (its `can_administer_channel_group`, by default its
 * creator)? Guests never are. Realm administrators are not counted here: callers let them in.
 */
export function administersChannel(data: SandboxData, user: UserRecord, stream: StreamRecord): boolean {
  if (user.role === 600) return false;
  if (stream.can_administer_channel_group === undefined) return stream.creator_id === user.user_id;
  return inGroupSetting(data, stream.can_administer_channel_group, user.user_id);
}

/** The id of the system group `name` (`role:members` …), as group-setting values name it. */
export function systemGroupId(data: SandboxData, name: string): number {
  return data.userGroups.find((g) => g.is_system_group && g.name === name)?.id ?? 0;
}

/** The Channel record as GET /streams returns it. */
export function streamToApi(data: SandboxData, stream: StreamRecord): Record<string, unknown> {
  const first = data.messages.find((m) => m.stream_id === stream.stream_id);
  const nobody = systemGroupId(data, "role:nobody");
  const admins = systemGroupId(data, "role:administrators");
  const everyone = systemGroupId(data, "role:everyone");
  return {
    stream_id: stream.stream_id,
    name: stream.name,
    is_archived: stream.is_archived,
    description: stream.description,
    // Rendered on each read; a date-less <time:…> takes the channel's creation date.
    rendered_description: renderDescription(data, stream.description, stream.date_created * 1000),
    date_created: stream.date_created,
    creator_id: stream.creator_id,
    invite_only: stream.invite_only,
    is_web_public: stream.is_web_public,
    stream_post_policy: 1,
    is_announcement_only: false,
    message_retention_days: stream.message_retention_days,
    history_public_to_subscribers: stream.history_public_to_subscribers,
    topics_policy: stream.topics_policy,
    first_message_id: first?.id ?? null,
    folder_id: stream.folder_id,
    is_recently_active: data.messages.some((m) => m.stream_id === stream.stream_id),
    can_add_subscribers_group: nobody,
    can_remove_subscribers_group: admins,
    can_administer_channel_group: stream.can_administer_channel_group ?? {
      direct_members: stream.creator_id === null ? [] : [stream.creator_id],
      direct_subgroups: [],
    },
    can_delete_any_message_group: admins,
    can_delete_own_message_group: everyone,
    can_move_messages_out_of_channel_group: stream.can_move_messages_out_of_channel_group ?? nobody,
    can_move_messages_within_channel_group: stream.can_move_messages_within_channel_group ?? nobody,
    can_send_message_group: everyone,
    can_subscribe_group: nobody,
    can_resolve_topics_group: stream.can_resolve_topics_group ?? nobody,
    stream_weekly_traffic: null,
    subscriber_count: subscriberIds(data, stream.stream_id).length,
  };
}

/** A subscription object (GET /users/me/subscriptions, `subscription` add events). */
export function subscriptionToApi(
  data: SandboxData,
  stream: StreamRecord,
  sub: SubscriptionRecord,
  includeSubscribers: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    ...streamToApi(data, stream),
    color: sub.color,
    is_muted: sub.is_muted,
    in_home_view: !sub.is_muted,
    pin_to_top: sub.pin_to_top,
    desktop_notifications: null,
    email_notifications: null,
    wildcard_mentions_notify: null,
    push_notifications: null,
    audible_notifications: null,
  };
  if (includeSubscribers) out.subscribers = subscriberIds(data, stream.stream_id);
  return out;
}

/** peer_add / peer_remove to everyone else who can see the channel. */
function emitPeers(core: SandboxCore, stream: StreamRecord, op: "peer_add" | "peer_remove", ids: number[]) {
  if (ids.length === 0) return;
  const watchers = core.data.users.filter(
    (u) => u.is_active && !ids.includes(u.user_id) && canAccessMetadata(core.data, u, stream),
  );
  emitToUsers(
    core,
    watchers.map((u) => u.user_id),
    { type: "subscription", op, stream_ids: [stream.stream_id], user_ids: ids },
  );
}

/** Subscribe users to one channel; returns who was newly subscribed. */
export function subscribeUsers(core: SandboxCore, stream: StreamRecord, users: UserRecord[]): number[] {
  const data = core.data;
  const added: number[] = [];
  const maxId = data.messages.at(-1)?.id ?? 0;
  for (const user of users) {
    if (subscription(data, stream.stream_id, user.user_id)) continue;
    const old = data.subscriptions.find(
      (s) => s.stream_id === stream.stream_id && s.user_id === user.user_id,
    );
    if (old) Object.assign(old, { active: true, subscribed_after_message_id: maxId });
    else addSubscription(data, stream.stream_id, user.user_id, maxId);
    added.push(user.user_id);
  }
  for (const id of added) {
    const sub = subscription(data, stream.stream_id, id)!;
    emitToUsers(core, [id], {
      type: "subscription",
      op: "add",
      subscriptions: [subscriptionToApi(data, stream, sub, true)],
    });
  }
  emitPeers(core, stream, "peer_add", added);
  return added;
}

/** Unsubscribe users from one channel; returns who was removed. */
export function unsubscribeUsers(core: SandboxCore, stream: StreamRecord, users: UserRecord[]): number[] {
  const removed: number[] = [];
  for (const user of users) {
    const sub = subscription(core.data, stream.stream_id, user.user_id);
    if (!sub) continue;
    sub.active = false;
    removed.push(user.user_id);
    emitToUsers(core, [user.user_id], {
      type: "subscription",
      op: "remove",
      subscriptions: [{ name: stream.name, stream_id: stream.stream_id }],
    });
  }
  emitPeers(core, stream, "peer_remove", removed);
  return removed;
}

/**
 * Rename a channel, as PATCH /streams/{id} with `new_name` does: what is wrong with the name
 * (`taken`: the name another channel has), or undefined once renamed. Everyone who can see the channel gets a `stream` update event with
 * `property: "name"`, the old name in `name` and the new one in `value`, as the server sends it.
 */
export function renameStream(
  core: SandboxCore,
  stream: StreamRecord,
  newName: string,
): { msg: string; taken?: string } | undefined {
  const name = newName.trim();
  if (name === "") return { msg: "Channel name can't be empty." };
  if ([...name].length > 60) return { msg: "Channel name too long (limit: 60 characters)." };
  const taken = streamByName(core.data, name);
  // The server's 409 CHANNEL_ALREADY_EXISTS, naming the channel asked for.
  if (taken && taken.stream_id !== stream.stream_id)
    return { msg: `Channel '${name}' already exists`, taken: name };
  if (name === stream.name) return undefined;
  const old = stream.name;
  stream.name = name;
  const viewers = core.data.users.filter((u) => u.is_active && canAccessMetadata(core.data, u, stream));
  emitToUsers(
    core,
    viewers.map((u) => u.user_id),
    { type: "stream", op: "update", stream_id: stream.stream_id, name: old, property: "name", value: name },
  );
  return undefined;
}
