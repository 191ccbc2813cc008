/** Who may read a message (the server's has_message_access, simplified to the sandbox's model). */
import { invalidMessage } from "../http/api-error.ts";
import type { MessageRecord, SandboxData, UserRecord } from "./data.ts";
import { isSubscribed, streamById } from "./streams.ts";

export function canAccessMessage(data: SandboxData, user: UserRecord, msg: MessageRecord): boolean {
  if (msg.flags[String(user.user_id)] !== undefined) return true;
  if (msg.type === "private") return false;
  const stream = streamById(data, msg.stream_id!);
  if (!stream) return false;
  if (!stream.invite_only) return user.role !== 600 || isSubscribed(data, stream.stream_id, user.user_id);
  return stream.history_public_to_subscribers && isSubscribed(data, stream.stream_id, user.user_id);
}

/** The message if it exists and the user may read it; otherwise "Invalid message(s)". */
export function accessMessage(data: SandboxData, user: UserRecord, id: number): MessageRecord {
  const msg = data.messages.find((m) => m.id === id);
  if (!msg || !canAccessMessage(data, user, msg)) throw invalidMessage();
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
