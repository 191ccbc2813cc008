/**
 * The Notification Bot's notices of a move, as the server posts them after moving messages: in the
 * new topic (unless `send_notification_to_new_thread` is false, and not for a resolve alone) and
 * in the old one (only if `send_notification_to_old_thread` is true), each read for the mover
 * alone. Whether the whole topic moved is `change_all`, or no message the mover can read is left.
 */
import type { SandboxCore } from "../core.ts";
import type { MessageRecord, StreamRecord, UserRecord } from "./data.ts";
import { canReadHistoryOf } from "./move-permissions.ts";
import { channelSlug, hashComponent } from "./narrow-url.ts";
import { sendMessage } from "./send-message.ts";

export interface MoveNotice {
  by: UserRecord;
  moved: readonly MessageRecord[];
  /** The message the request named. */
  target: MessageRecord;
  from: StreamRecord;
  to: StreamRecord;
  oldTopic: string;
  newTopic: string;
  wholeTopic: boolean;
  /** A resolve or unresolve within the channel: no notice in the new topic. */
  resolveOnly: boolean;
  notifyOld: boolean;
  notifyNew: boolean;
}

export function noticeMove(core: SandboxCore, n: MoveNotice): void {
  const data = core.data;
  const bot = data.users.find((u) => u.system_bot);
  if (!bot) return;
  const movedIds = new Set(n.moved.map((m) => m.id));
  const readable = (stream: StreamRecord, topic: string) => {
    const visible = canReadHistoryOf(data, n.by, stream);
    const key = topic.toLowerCase();
    return data.messages.filter(
      (m) =>
        m.stream_id === stream.stream_id &&
        m.topic.toLowerCase() === key &&
        !movedIds.has(m.id) &&
        !m.resolve_notice &&
        visible(m),
    );
  };
  const all = n.wholeTopic || readable(n.from, n.oldTopic).length === 0;
  const user = `@_**${n.by.full_name}|${n.by.user_id}**`;
  const count = n.moved.length;
  const unread = new Set(
    data.subscriptions.filter((s) => s.active && s.user_id !== n.by.user_id).map((s) => s.user_id),
  );
  const post = (stream: StreamRecord, topic: string, text: string) =>
    sendMessage(core, bot, { type: "stream", stream, topic }, text, {
      client: "Internal",
      trusted: true,
      unreadOnly: unread,
    });
  if (n.notifyNew && (n.from !== n.to || !n.resolveOnly)) {
    const old = topicLink(n.from, n.oldTopic);
    let text: string;
    if (all && readable(n.to, n.newTopic).length === 0)
      text = `This topic was moved here from ${old} by ${user}.`;
    else if (count === 1) {
      const link = `${core.url}/#narrow/channel/${channelSlug(n.to)}/topic/${hashComponent(n.newTopic)}/near/${n.target.id}`;
      text = `[A message](${link}) was moved here from ${old} by ${user}.`;
    } else text = `${count} messages were moved here from ${old} by ${user}.`;
    post(n.to, n.newTopic, text);
  }
  if (n.notifyOld) {
    const to = topicLink(n.to, n.newTopic);
    const text = all
      ? `This topic was moved to ${to} by ${user}.`
      : count === 1
        ? `A message was moved from this topic to ${to} by ${user}.`
        : `${count} messages were moved from this topic to ${to} by ${user}.`;
    post(n.from, n.oldTopic, text);
  }
}

/** Characters that break `#**channel>topic**`, and their escapes in the fallback link. */
const BREAKS_LINK = /[`>*&[\]]|\$\$/g;
const ESCAPES: Record<string, string> = {
  "`": "&#96;",
  ">": "&gt;",
  "*": "&#42;",
  "&": "&amp;",
  $$: "&#36;&#36;",
  "[": "&#91;",
  "]": "&#93;",
};

/** `#**channel>topic**`, or a plain Markdown link when a name would break that syntax. */
function topicLink(stream: StreamRecord, topic: string): string {
  const breaks = (s: string) => s.search(BREAKS_LINK) !== -1;
  if (!breaks(stream.name) && !breaks(topic)) return `#**${stream.name}>${topic}**`;
  const escaped = (s: string) => s.replace(BREAKS_LINK, (c) => ESCAPES[c] ?? c);
  let url = `#narrow/channel/${channelSlug(stream)}`;
  if (topic) url += `/topic/${hashComponent(topic)}`;
  return topic
    ? `[#${escaped(stream.name)} > ${escaped(topic)}](${url})`
    : `[#${escaped(stream.name)}](${url})`;
}
