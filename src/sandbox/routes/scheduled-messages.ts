/** GET/POST /scheduled_messages and PATCH/DELETE /scheduled_messages/{id} (NOTES §9). */
import type { SandboxCore } from "../core.ts";
import { badRequest, missingArgument, notFound } from "../http/api-error.ts";
import type { Params } from "../http/params.ts";
import { checkInt, checkIntList } from "../http/params.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { defaultReadBySender } from "../http/user-agent.ts";
import { emitToUsers } from "../queues/delivery.ts";
import { messageType, normalizeContent, normalizeTopic } from "../state/addressee.ts";
import { nextId, type ScheduledRecord, type UserRecord } from "../state/data.ts";
import { renderMarkdown } from "../state/markdown.ts";
import { pendingScheduled, scheduledToApi } from "../state/scheduled-view.ts";
import { checkTopicPolicy, streamDoesNotExist } from "../state/send-message.ts";
import { canAccessContent, streamById } from "../state/streams.ts";
import { userById } from "../state/users.ts";

const TYPES = ["direct", "channel", "stream", "private"] as const;
const notFoundSm = () => notFound("Scheduled message does not exist");

function readTo(params: Params): number | number[] | undefined {
  const found = params.json("to");
  if (!found) return undefined;
  return Array.isArray(found.value) ? checkIntList(found.value, "to") : checkInt(found.value, "to");
}

function checkFuture(core: SandboxCore, ts: number): void {
  if (ts <= core.nowSeconds()) throw badRequest("Scheduled delivery time must be in the future.");
}

/** Resolve and validate recipients; DMs store ids without the sender unless to self. */
function recipients(
  core: SandboxCore,
  user: UserRecord,
  type: "stream" | "private",
  to: number | number[],
  topic?: string,
) {
  const data = core.data;
  if (type === "stream") {
    const list = Array.isArray(to) ? to : [to];
    if (list.length !== 1) throw badRequest("Expected exactly one channel");
    const stream = streamById(data, list[0]!);
    if (!stream || !canAccessContent(data, user, stream)) throw streamDoesNotExist(list[0]!);
    if (topic === undefined) throw badRequest("Missing topic");
    const normalized = normalizeTopic(data, topic);
    checkTopicPolicy(stream, normalized);
    return { to: stream.stream_id as number | number[], topic: normalized };
  }
  const ids = [...new Set(Array.isArray(to) ? to : [to])];
  if (ids.length === 0) throw badRequest("Message must have recipients");
  for (const id of ids) {
    const u = userById(data, id);
    if (!u || u.system_bot) throw badRequest(`Invalid user ID ${id}`);
  }
  const others = ids.filter((id) => id !== user.user_id).sort((a, b) => a - b);
  return { to: (others.length > 0 ? others : [user.user_id]) as number | number[], topic: "" };
}

function emitUpdate(core: SandboxCore, sm: ScheduledRecord): void {
  emitToUsers(
    core,
    [sm.sender_id],
    { type: "scheduled_messages", op: "update", scheduled_message: {} },
    (q, ev) => ({
      ...ev,
      scheduled_message: scheduledToApi(core.data, sm, q.options.capabilities.empty_topic_name),
    }),
  );
}

function create(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const rawType = params.literal("type", TYPES);
  if (rawType === undefined) throw missingArgument("type");
  const to = readTo(params);
  if (to === undefined) throw missingArgument("to");
  const content = params.requiredStr("content");
  const topic = params.str("topic");
  const ts = params.requiredInt("scheduled_delivery_timestamp");
  const readBySender = params.bool("read_by_sender");
  checkFuture(core, ts);
  const type = messageType(rawType);
  const target = recipients(core, user, type, to, topic);
  const body = normalizeContent(content);
  const toSelf =
    type === "private" && Array.isArray(target.to) && target.to.length === 1 && target.to[0] === user.user_id;
  const sm: ScheduledRecord = {
    scheduled_message_id: nextId(core.data, "scheduled"),
    sender_id: user.user_id,
    type,
    to: target.to,
    topic: target.topic,
    content: body,
    rendered_content: renderMarkdown(core.data, body).html,
    scheduled_delivery_timestamp: ts,
    read_by_sender: readBySender ?? (defaultReadBySender(ctx.clientName) && !toSelf),
    client: ctx.clientName,
    failed: false,
    failure_message: null,
    delivered: false,
    delivered_message_id: null,
  };
  core.data.scheduled.push(sm);
  emitToUsers(
    core,
    [user.user_id],
    { type: "scheduled_messages", op: "add", scheduled_messages: [] },
    (q, ev) => ({
      ...ev,
      scheduled_messages: [scheduledToApi(core.data, sm, q.options.capabilities.empty_topic_name)],
    }),
  );
  return { scheduled_message_id: sm.scheduled_message_id };
}

function access(ctx: AuthedContext): ScheduledRecord {
  const id = Number(ctx.path.scheduled_message_id);
  const sm = ctx.core.data.scheduled.find(
    (s) => s.scheduled_message_id === id && s.sender_id === ctx.user.user_id,
  );
  if (!sm) throw notFoundSm();
  return sm;
}

function edit(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const rawType = params.literal("type", TYPES);
  const to = readTo(params);
  const content = params.str("content");
  const topic = params.str("topic");
  const ts = params.int("scheduled_delivery_timestamp");
  if ([rawType, to, content, topic, ts].every((v) => v === undefined)) throw badRequest("Nothing to change");
  if (rawType !== undefined && to === undefined) {
    throw badRequest("Recipient required when updating type of scheduled message.");
  }
  const sm = access(ctx);
  const type = rawType === undefined ? sm.type : messageType(rawType);
  if (rawType !== undefined && type === "stream" && topic === undefined) {
    throw badRequest("Topic required when updating scheduled message type to channel.");
  }
  if (ts !== undefined) checkFuture(core, ts);
  if (sm.delivered) throw badRequest("Scheduled message was already sent");
  if (sm.failed && ts === undefined) throw badRequest("Scheduled delivery time must be in the future.");
  if (to !== undefined || topic !== undefined) {
    const target = recipients(
      core,
      user,
      type,
      to ?? sm.to,
      topic ?? (type === "stream" ? sm.topic : undefined),
    );
    sm.type = type;
    sm.to = target.to;
    sm.topic = target.topic;
  }
  if (content !== undefined) {
    sm.content = normalizeContent(content);
    sm.rendered_content = renderMarkdown(core.data, sm.content).html;
  }
  if (ts !== undefined) sm.scheduled_delivery_timestamp = ts;
  sm.failed = false;
  sm.failure_message = null;
  emitUpdate(core, sm);
  return {};
}

export const scheduledMessageRoutes = [
  route("/scheduled_messages", {
    GET: endpoint(({ core, user }) => ({
      scheduled_messages: pendingScheduled(core.data, user.user_id).map((s) => scheduledToApi(core.data, s)),
    })),
    POST: endpoint(create),
  }),
  route("/scheduled_messages/{scheduled_message_id:int}", {
    PATCH: endpoint(edit),
    DELETE: endpoint((ctx) => {
      const sm = access(ctx);
      if (sm.delivered) throw notFoundSm();
      ctx.core.data.scheduled = ctx.core.data.scheduled.filter((s) => s !== sm);
      emitToUsers(ctx.core, [sm.sender_id], {
        type: "scheduled_messages",
        op: "remove",
        scheduled_message_id: sm.scheduled_message_id,
      });
      return {};
    }),
  }),
];
