/**
 * Message reports (see docs/internals/server-behaviour.md#message-reports): POST
 * /messages/{message_id}/report with the server's order of checks; the Notification Bot posts the
 * report into the moderation request channel with the server's header, quote, and spoiler-fenced
 * original.
 */

import { CUT_CONTENT_ENDING, truncate } from "../../wire/stored-content.ts";
import type { SandboxCore } from "../core.ts";
import { badRequest, missingArgument } from "../http/api-error.ts";
import { endpoint, route } from "../http/router.ts";
import type { MessageRecord, UserRecord } from "../state/data.ts";
import { accessMessage } from "../state/message-view.ts";
import { sendMessage } from "../state/send-message.ts";
import { streamById } from "../state/streams.ts";
import { userById } from "../state/users.ts";

export const reportRoutes = [
  route("/messages/{message_id:int}/report", {
    POST: endpoint(({ core, user, params, path }) => {
      const type = params.literal("report_type", Object.keys(REPORT_REASONS));
      if (type === undefined) throw missingArgument("report_type");
      const description = params.str("description") ?? "";
      if ([...description].length > 1000)
        throw badRequest("description is too long (limit: 1000 characters)");
      // The server compares the description with "" as given: spaces alone are an explanation.
      if (type === "other" && description === "") throw badRequest("An explanation is required.");
      if (core.data.realm.moderation_request_channel_id === null) {
        throw badRequest("Message reporting is not enabled in this organization.");
      }
      const msg = accessMessage(core.data, user, Number(path.message_id));
      sendReport(core, user, msg, type, description);
      return {};
    }),
  }),
];

export const REPORT_REASONS: Record<string, string> = {
  spam: "Spam",
  harassment: "Harassment",
  inappropriate: "Inappropriate content",
  norms: "Violates community norms",
  other: "Other reason",
};

const SNIPPET_LENGTH = 10000 - 1000 - 500;

const silent = (u: UserRecord) => `@_**${u.full_name}|${u.user_id}**`;

/** `<time:…>` with Python's isoformat of a UTC datetime. */
export function globalTime(seconds: number): string {
  return `<time:${new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "+00:00")}>`;
}

/** A fence of backticks longer than any fence inside `content` (at least three). */
export function unusedFence(content: string): string {
  let longest = 2;
  for (const m of content.matchAll(/^ {0,3}(`{3,}|~{3,})/gm)) longest = Math.max(longest, m[1]!.length);
  return "`".repeat(longest + 1);
}

function header(core: SandboxCore, reporter: UserRecord, reported: UserRecord, msg: MessageRecord): string {
  const data = core.data;
  const at = globalTime(msg.timestamp);
  const base = `${silent(reporter)} reported a`;
  if (msg.type === "stream") return `${base} message sent by ${silent(reported)} at ${at}.`;
  if (msg.dm_user_ids.length <= 2) {
    if (reported.user_id !== reporter.user_id)
      return `${base} direct message sent by ${silent(reported)} at ${at}.`;
    const otherId = msg.dm_user_ids.find((id) => id !== reporter.user_id);
    const other = otherId === undefined ? reporter : userById(data, otherId)!;
    return `${base} direct message sent by ${silent(reported)} to ${silent(other)} at ${at}.`;
  }
  const others = msg.dm_user_ids
    .filter((id) => id !== reported.user_id)
    .map((id) => silent(userById(data, id)!))
    .sort();
  const last = others.pop()!;
  const list = others.join(", ") + (others.length > 1 ? "," : "");
  return `${base} direct message sent by ${silent(reported)} to ${list} and ${last} at ${at}.`;
}

function original(core: SandboxCore, msg: MessageRecord): string {
  if (msg.type === "stream") {
    const stream = streamById(core.data, msg.stream_id!)!;
    return `Original message at #**${stream.name}>${msg.topic}@${msg.id}**`;
  }
  const ids = [...msg.dm_user_ids].sort((a, b) => a - b);
  const slug = ids.join(",") + (ids.length >= 3 ? "-group" : "");
  return `[Original message](${core.url}/#narrow/dm/${slug}/near/${msg.id})`;
}

/** Post the report to the moderation channel, composed as the server does (before its end strip). */
export function sendReport(
  core: SandboxCore,
  reporter: UserRecord,
  msg: MessageRecord,
  reportType: string,
  description: string,
): void {
  const data = core.data;
  const channel = streamById(data, data.realm.moderation_request_channel_id!)!;
  const reported = userById(data, msg.sender_id)!;
  const bot = data.users.find((u) => u.system_bot)!;
  const topic = channel.topics_policy === "empty_topic_only" ? "" : `${reported.full_name} moderation`;
  const content = truncate(msg.content, SNIPPET_LENGTH, CUT_CONTENT_ENDING);
  const fence = unusedFence(content);
  const text =
    header(core, reporter, reported, msg) +
    `\n\`\`\`quote\n**${REPORT_REASONS[reportType]}**. ${description}\n\`\`\`\n\n` +
    `${fence} spoiler ${original(core, msg)}\n${content}\n${fence}\n`;
  sendMessage(core, bot, { type: "stream", stream: channel, topic }, text, {
    client: "Internal",
    trusted: true,
  });
}
