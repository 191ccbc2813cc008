/**
 * The Notification Bot's notice in a topic just resolved or unresolved, as the server posts it:
 * "@_**Name|id** has marked this topic as resolved." in the channel the topic was in, under the new
 * topic name. Read for everyone but the people whose `resolved_topic_notice_auto_read_policy` is
 * `never`. A notice of the topic's last message less than a minute old is deleted instead (an
 * undo), and no new one is posted.
 */
import type { SandboxCore } from "../core.ts";
import type { MessageRecord, StreamRecord, UserRecord } from "./data.ts";
import { sendMessage } from "./send-message.ts";
import { subscriberIds } from "./streams.ts";
import { setting } from "./user-settings.ts";
import { userById } from "./users.ts";

const UNDO_GRACE_SECONDS = 60;

export function noticeResolve(
  core: SandboxCore,
  by: UserRecord,
  stream: StreamRecord,
  topic: string,
  change: "resolved" | "unresolved",
  remove: (msg: MessageRecord) => void,
): void {
  const data = core.data;
  const key = topic.toLowerCase();
  const last = data.messages
    .filter((m) => m.stream_id === stream.stream_id && m.topic.toLowerCase() === key)
    .reduce<MessageRecord | undefined>((a, m) => (a && a.id > m.id ? a : m), undefined);
  if (last?.resolve_notice && core.clock.seconds() - last.timestamp <= UNDO_GRACE_SECONDS) {
    remove(last);
    return;
  }
  const bot = data.users.find((u) => u.system_bot);
  if (!bot) return;
  const unread = new Set(
    subscriberIds(data, stream.stream_id).filter((id) => {
      const u = userById(data, id);
      return (
        u &&
        !u.is_bot &&
        id !== by.user_id &&
        setting(u, "resolved_topic_notice_auto_read_policy") === "never"
      );
    }),
  );
  const text = `@_**${by.full_name}|${by.user_id}** has marked this topic as ${change}.`;
  const notice = sendMessage(core, bot, { type: "stream", stream, topic }, text, {
    client: "Internal",
    trusted: true,
    unreadOnly: unread,
  });
  notice.resolve_notice = true;
}
