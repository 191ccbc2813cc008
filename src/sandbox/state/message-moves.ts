/**
 * Who holds moved messages (a UserMessage row on the server) after a move to another channel, as
 * the server's do_update_message keeps them: the old channel's subscribers not subscribed to the
 * new one lose their rows (so a read of their own messages by id, with no narrow, no longer finds
 * them); of those, the ones who lose access too (guests, or everyone when the new channel is
 * private) are sent `delete_message` instead of the edit; the new channel's subscribers who were
 * not in the old one get a row (read) when its history is protected.
 */
import type { MessageRecord, SandboxData, StreamRecord } from "./data.ts";
import { isPublic } from "./streams.ts";
import { userById } from "./users.ts";

/** Subscribed to the channel, deactivated accounts included (as the server counts them here). */
function subscribed(data: SandboxData, streamId: number): Set<number> {
  return new Set(
    data.subscriptions.filter((s) => s.stream_id === streamId && s.active).map((s) => s.user_id),
  );
}

/** Moves the rows of `messages` from channel `from` to `to`; returns the users who lost access to them. */
export function moveRows(
  data: SandboxData,
  messages: readonly MessageRecord[],
  from: StreamRecord,
  to: StreamRecord,
): number[] {
  const before = subscribed(data, from.stream_id);
  const after = subscribed(data, to.stream_id);
  const losing = [...before].filter((id) => !after.has(id));
  const gaining = to.history_public_to_subscribers ? [] : [...after].filter((id) => !before.has(id));
  for (const m of messages) {
    for (const id of losing) delete m.flags[String(id)];
    for (const id of gaining) m.flags[String(id)] ??= ["read"];
  }
  return losing.filter((id) => !isPublic(to) || userById(data, id)?.role === 600);
}
