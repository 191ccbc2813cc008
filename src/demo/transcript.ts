/**
 * Readable lines for the demo's transcript: who said what, where.
 */
import type { SandboxControl } from "../sandbox/types.ts";

/** The fields of a sandbox message record the transcript reads. */
export interface MessageRecordView {
  id: number;
  sender_id: number;
  type: "stream" | "private";
  stream_id: number | null;
  topic: string;
  content: string;
  dm_user_ids: number[];
}

export interface Names {
  user(id: number): string;
  channel(id: number): string;
}

/**
 * Names for ids, looked up when printed (people join during the scene). Senders the control API
 * does not list (the server's Notification Bot) are resolved through `lookup` beforehand.
 */
export function namesFrom(
  control: SandboxControl,
  channels: Map<number, string>,
  extra: Map<number, string>,
): Names {
  return {
    user: (id) => control.users().find((u) => u.user_id === id)?.full_name ?? extra.get(id) ?? `user ${id}`,
    channel: (id) => channels.get(id) ?? `channel ${id}`,
  };
}

const indent = (text: string, by: string) => text.replace(/\n/g, `\n${by}`);

/** One message as `#channel › topic  Sender: content` or `DM (a, b)  Sender: content`. */
export function formatMessage(m: MessageRecordView, names: Names): string {
  const where =
    m.type === "stream"
      ? `#${names.channel(m.stream_id ?? -1)} › ${m.topic || "(no topic)"}`
      : `DM (${m.dm_user_ids.map((id) => names.user(id)).join(", ")})`;
  const head = `    ${where}  ${names.user(m.sender_id)}: `;
  return head + indent(m.content, " ".repeat(head.length));
}
