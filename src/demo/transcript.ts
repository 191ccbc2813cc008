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

export function namesFrom(control: SandboxControl, channels: Map<number, string>): Names {
  const users = new Map(control.users().map((u) => [u.user_id, u.full_name]));
  return {
    user: (id) => users.get(id) ?? `user ${id}`,
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
