/**
 * The conversation a bot types in or asks about, as bot authors write it: a channel (id or
 * name) and topic, or the other users of a direct conversation.
 */

import type { TypingParams } from "../../api/resources/typing.ts";
import { BothostError } from "../../errors/bothost-error.ts";
import type { TypingConversation } from "./typing-conversation.ts";

/**
 * @example
 * ```ts
 * const inTopic: TypingTarget = { channel: "support", topic: "printer" };
 * const direct: TypingTarget = { users: [12] }; // the bot itself is implied
 * ```
 */
export type TypingTarget = { channel: number | string; topic: string } | { users: readonly number[] };

/** Checks the shape, so a wrong argument fails with a message instead of a 400. */
export function checkTypingTarget(target: TypingTarget, where: string): void {
  if (typeof target === "object" && target !== null) {
    if ("users" in target) {
      const ok = Array.isArray(target.users) && target.users.length > 0;
      if (ok && target.users.every((id) => Number.isInteger(id) && id > 0)) return;
    } else if ("channel" in target && typeof target.topic === "string") return;
  }
  throw new BothostError(
    "INVALID_ARGUMENT",
    `${where}: give { channel: <id or name>, topic: "<topic>" } or { users: [<user id>, …] }, ` +
      `got ${JSON.stringify(target)}.`,
  );
}

/** POST /typing parameters (without `op`) for a target whose channel is resolved to `streamId`. */
export function typingParams(target: TypingTarget, streamId: number | undefined): Omit<TypingParams, "op"> {
  if ("users" in target) return { type: "direct", to: [...target.users] };
  return { type: "channel", stream_id: streamId, topic: target.topic };
}

/** The tracker's conversation: a direct conversation includes the bot (`selfId`). */
export function trackerConversation(
  target: TypingTarget,
  streamId: number | undefined,
  selfId: number,
): TypingConversation {
  if ("users" in target) return { type: "direct", userIds: [...new Set([...target.users, selfId])] };
  return { type: "stream", streamId: streamId ?? -1, topic: target.topic };
}
