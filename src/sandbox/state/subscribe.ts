/**
 * Subscribing and unsubscribing, with the events the server sends: `subscription` add/remove to
 * the user, peer_add/peer_remove to everyone else who can see the channel.
 */

import type { SandboxCore } from "../core.ts";
import { STREAM_COLORS } from "../org/build-state.ts";
import { emitToUsers } from "../queues/delivery.ts";
import type { StreamRecord, UserRecord } from "./data.ts";
import { canAccessMetadata, subscription, subscriptionToApi } from "./streams.ts";

function watchers(core: SandboxCore, stream: StreamRecord, except: Set<number>): number[] {
  return core.data.users
    .filter((u) => u.is_active && !except.has(u.user_id) && canAccessMetadata(core.data, u, stream))
    .map((u) => u.user_id);
}

/** Subscribe users to one channel; returns who was newly subscribed. */
export function subscribeUsers(core: SandboxCore, stream: StreamRecord, users: UserRecord[]): number[] {
  const data = core.data;
  const added: number[] = [];
  const maxId = data.messages.length > 0 ? data.messages[data.messages.length - 1]!.id : 0;
  for (const user of users) {
    if (subscription(data, stream.stream_id, user.user_id)) continue;
    const old = data.subscriptions.find(
      (s) => s.stream_id === stream.stream_id && s.user_id === user.user_id,
    );
    if (old) {
      old.active = true;
      old.subscribed_after_message_id = maxId;
    } else {
      data.subscriptions.push({
        stream_id: stream.stream_id,
        user_id: user.user_id,
        active: true,
        color: STREAM_COLORS[(stream.stream_id - 1) % STREAM_COLORS.length]!,
        is_muted: false,
        pin_to_top: false,
        subscribed_after_message_id: maxId,
      });
    }
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
  if (added.length > 0) {
    emitToUsers(core, watchers(core, stream, new Set(added)), {
      type: "subscription",
      op: "peer_add",
      stream_ids: [stream.stream_id],
      user_ids: added,
    });
  }
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
  }
  for (const id of removed) {
    emitToUsers(core, [id], {
      type: "subscription",
      op: "remove",
      subscriptions: [{ name: stream.name, stream_id: stream.stream_id }],
    });
  }
  if (removed.length > 0) {
    emitToUsers(core, watchers(core, stream, new Set(removed)), {
      type: "subscription",
      op: "peer_remove",
      stream_ids: [stream.stream_id],
      user_ids: removed,
    });
  }
  return removed;
}
