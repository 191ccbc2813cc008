/**
 * POST /typing (NOTES §4.3, §8): direct typing goes to every recipient (the sender included)
 * with receives_typing_notifications; channel typing only to queues that declared
 * stream_typing_notifications, and not at all for channels over 100 subscribers.
 */
import type { SandboxCore } from "../core.ts";
import { badRequest, missingArgument } from "../http/api-error.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { emitToUsers } from "../queues/delivery.ts";
import type { UserRecord } from "../state/data.ts";
import { visibleTopic } from "../state/message-view.ts";
import { normalizeTopic } from "../state/send-message.ts";
import { canAccessContent, streamById, subscriberIds } from "../state/streams.ts";
import { setting } from "../state/user-settings.ts";
import { apiEmail, userById } from "../state/users.ts";

const MAX_STREAM_SIZE_FOR_TYPING = 100;

const wantsTyping = (u: UserRecord | undefined) =>
  u?.is_active === true && setting(u, "receives_typing_notifications") !== false;

function typing(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const type = params.literal("type", ["direct", "stream", "channel"] as const) ?? "direct";
  const op = params.literal("op", ["start", "stop"] as const);
  if (op === undefined) throw missingArgument("op");
  const to = params.intList("to");
  const streamId = params.int("stream_id");
  const topic = params.str("topic");
  const data = core.data;
  const sender = { user_id: user.user_id, email: apiEmail(data, user) };
  if (type === "stream" || type === "channel") {
    if (streamId === undefined) throw badRequest("Missing 'stream_id' argument");
    if (topic === undefined) throw badRequest("Missing topic");
    if (setting(user, "send_stream_typing_notifications") === false) {
      throw badRequest("User has disabled typing notifications for channel messages");
    }
    const stream = streamById(data, streamId);
    if (!stream || !canAccessContent(data, user, stream)) throw badRequest("Invalid channel ID");
    const subscribers = subscriberIds(data, stream.stream_id);
    if (subscribers.length > MAX_STREAM_SIZE_FOR_TYPING) return {};
    const normalized = normalizeTopic(data, topic);
    const targets = subscribers.filter((id) => wantsTyping(userById(data, id)));
    emitToUsers(
      core,
      targets,
      { type: "typing", op, message_type: "stream", sender, stream_id: stream.stream_id, topic: normalized },
      (queue, ev) =>
        queue.options.capabilities.stream_typing_notifications
          ? { ...ev, topic: visibleTopic(data, normalized, queue.options.capabilities.empty_topic_name) }
          : null,
    );
    return {};
  }
  if (to === undefined) throw badRequest("Missing 'to' argument");
  if (to.length === 0) throw badRequest("Empty 'to' list");
  if (setting(user, "send_private_typing_notifications") === false) {
    throw badRequest("User has disabled typing notifications for direct messages");
  }
  sendDirectTyping(core, user, to, op);
  return {};
}

function sendDirectTyping(core: SandboxCore, user: UserRecord, to: number[], op: "start" | "stop"): void {
  const data = core.data;
  const people = to.map((id) => {
    const u = userById(data, id);
    if (!u || u.system_bot) throw badRequest(`Invalid user ID ${id}`);
    return u;
  });
  if (!people.some((p) => p.user_id === user.user_id)) people.push(user);
  const unique = [...new Map(people.map((p) => [p.user_id, p])).values()].sort(
    (a, b) => a.user_id - b.user_id,
  );
  emitToUsers(
    core,
    unique.filter(wantsTyping).map((p) => p.user_id),
    {
      type: "typing",
      op,
      message_type: "direct",
      sender: { user_id: user.user_id, email: apiEmail(data, user) },
      recipients: unique.map((p) => ({ user_id: p.user_id, email: apiEmail(data, p) })),
    },
  );
}

export const typingRoutes = [route("/typing", { POST: endpoint(typing) })];
