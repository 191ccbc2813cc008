/**
 * Scheduled messages (see docs/internals/server-behaviour.md#scheduled-messages): the
 * /scheduled_messages routes, and delivery on the sandbox clock: due messages go out at
 * whole-minute checks; more than 10 minutes late means failure (failed:true, an update event and a
 * Notification Bot DM); success sends the message and a `remove` event to the owner.
 */
import type { SandboxCore } from "./core.ts";
import { ApiError, badRequest, missingArgument, notFound } from "./http/api-error.ts";
import type { Params } from "./http/params.ts";
import { type AuthedContext, endpoint, route } from "./http/router.ts";
import { defaultReadBySender } from "./http/server.ts";
import { emitToUsers } from "./queues/emit.ts";
import { globalTime } from "./routes/report.ts";
import { nextId, type SandboxData, type ScheduledRecord, type UserRecord } from "./state/data.ts";
import { messageContext, renderMarkdown } from "./state/markdown.ts";
import { visibleTopic } from "./state/message-view.ts";
import {
  checkTopicPolicy,
  messageType,
  normalizeContent,
  normalizeTopic,
  notifyByBot,
  sendMessage,
  streamDoesNotExist,
} from "./state/send-message.ts";
import { canAccessContent, streamById } from "./state/streams.ts";
import { userById } from "./state/users.ts";

const LATE_CUTOFF_SECONDS = 10 * 60;
const LATE_MESSAGE = "Message could not be sent at the scheduled time.";

/** Deliver (or fail) every scheduled message due by the start of the current minute. */
export function deliverDueScheduled(core: SandboxCore): number {
  const now = core.clock.seconds();
  const minuteStart = now - (now % 60);
  const due = core.data.scheduled
    .filter((s) => !s.delivered && !s.failed && s.scheduled_delivery_timestamp <= minuteStart)
    .sort((a, b) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp);
  for (const sm of due) deliverOne(core, sm, now);
  return due.length;
}

function deliverOne(core: SandboxCore, sm: ScheduledRecord, now: number): void {
  const data = core.data;
  const sender = userById(data, sm.sender_id);
  if (!sender?.is_active) {
    fail(core, sm, "Account is deactivated", false);
    return;
  }
  if (now - sm.scheduled_delivery_timestamp > LATE_CUTOFF_SECONDS) {
    fail(core, sm, LATE_MESSAGE, true);
    return;
  }
  try {
    const target =
      sm.type === "stream"
        ? { type: "stream" as const, stream: streamById(data, sm.to as number)!, topic: sm.topic }
        : {
            type: "private" as const,
            recipients: (sm.to as number[]).map((id) => userById(data, id)!).filter(Boolean),
            topic: "",
          };
    if (target.type === "stream" && !target.stream) throw new ApiError(400, "BAD_REQUEST", "Invalid channel");
    const msg = sendMessage(core, sender, target, sm.content, {
      client: sm.client,
      readBySender: sm.read_by_sender ?? undefined,
    });
    sm.delivered = true;
    sm.delivered_message_id = msg.id;
    emitScheduled(core, sm, "remove");
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    fail(core, sm, err.message, true);
  }
}

function fail(core: SandboxCore, sm: ScheduledRecord, reason: string, notify: boolean): void {
  sm.failed = true;
  sm.failure_message = reason;
  core.changed();
  if (!notify) return;
  emitScheduled(core, sm, "update");
  const sender = userById(core.data, sm.sender_id);
  if (!sender) return;
  const text =
    `The message you scheduled for ${globalTime(sm.scheduled_delivery_timestamp)} was not sent ` +
    `because of the following error:\n\n> ${reason}\n\n[View scheduled messages](#scheduled)\n\n`;
  notifyByBot(core, sender, text);
}

/** A scheduled_messages event to the sender: `add` and `update` carry the message, `remove` its id. */
export function emitScheduled(core: SandboxCore, sm: ScheduledRecord, op: "add" | "update" | "remove"): void {
  const event = { type: "scheduled_messages", op };
  if (op === "remove") {
    emitToUsers(core, [sm.sender_id], { ...event, scheduled_message_id: sm.scheduled_message_id });
    return;
  }
  const key = op === "add" ? "scheduled_messages" : "scheduled_message";
  emitToUsers(core, [sm.sender_id], { ...event, [key]: {} }, (queue, ev) => {
    const view = scheduledToApi(core.data, sm, queue.options.capabilities.empty_topic_name);
    return { ...ev, [key]: op === "add" ? [view] : view };
  });
}

/** A scheduled message as GET /scheduled_messages and its events carry it. */
export function scheduledToApi(
  data: SandboxData,
  sm: ScheduledRecord,
  allowEmptyTopic = true,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    scheduled_message_id: sm.scheduled_message_id,
    type: sm.type,
    to: sm.to,
    content: sm.content,
    rendered_content: sm.rendered_content,
    scheduled_delivery_timestamp: sm.scheduled_delivery_timestamp,
    failed: sm.failed,
  };
  if (sm.type === "stream") out.topic = visibleTopic(data, sm.topic, allowEmptyTopic);
  return out;
}

/** Undelivered scheduled messages of a user (failed ones included), by delivery time. */
export function pendingScheduled(data: SandboxData, userId: number): ScheduledRecord[] {
  return data.scheduled
    .filter((s) => s.sender_id === userId && !s.delivered)
    .sort(
      (a, b) =>
        a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp ||
        a.scheduled_message_id - b.scheduled_message_id,
    );
}

const TYPES = ["direct", "channel", "stream", "private"] as const;
const notFoundSm = () => notFound("Scheduled message does not exist");

/**
 * `to` is the server's `Json[int | list[int]]`: JSON that is neither an int nor a list of ints
 * fails both members of the union, and the server names the first error, the `int` member's:
 * `to["int"] is not an integer` (for a string, an email list, a float, `[1.0]` alike).
 */
function readTo(params: Params): number | number[] | undefined {
  const found = params.json("to");
  if (!found) return undefined;
  const { value, intLiterals } = found;
  const isInt = (v: unknown, i: number) =>
    typeof v === "number" && Number.isInteger(v) && intLiterals[i] === true;
  if (isInt(value, 0)) return (value as number) + 0;
  if (Array.isArray(value) && value.every(isInt)) return value.map((v: number) => v + 0);
  throw badRequest('to["int"] is not an integer');
}

function checkFuture(core: SandboxCore, ts: number): void {
  if (ts <= core.clock.seconds()) throw badRequest("Scheduled delivery time must be in the future.");
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
    // One channel id, never a list (not even of one id); and a direct message's `to` is a list.
    if (Array.isArray(to)) throw badRequest("Invalid data type for channel ID");
    const stream = streamById(data, to);
    if (!stream || !canAccessContent(data, user, stream)) throw streamDoesNotExist(to);
    if (topic === undefined) throw badRequest("Missing topic");
    const normalized = normalizeTopic(data, topic);
    checkTopicPolicy(stream, normalized);
    return { to: stream.stream_id as number | number[], topic: normalized };
  }
  if (!Array.isArray(to)) throw badRequest("Invalid data type for recipients");
  const ids = [...new Set(to)];
  if (ids.length === 0) throw badRequest("Message must have recipients");
  for (const id of ids) {
    const u = userById(data, id);
    if (!u || u.system_bot) throw badRequest(`Invalid user ID ${id}`);
  }
  const others = ids.filter((id) => id !== user.user_id).sort((a, b) => a - b);
  return { to: (others.length > 0 ? others : [user.user_id]) as number | number[], topic: "" };
}

function create(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  // Read in the server's parameter order: the first missing or invalid one is the error.
  const content = params.requiredStr("content");
  const readBySender = params.bool("read_by_sender");
  const to = readTo(params);
  if (to === undefined) throw missingArgument("to");
  const rawType = params.oneOf("type", TYPES);
  if (rawType === undefined) throw missingArgument("type");
  const ts = params.requiredInt("scheduled_delivery_timestamp");
  const topic = params.str("topic");
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
    rendered_content: renderMarkdown(core.data, body, core.clock.now(), messageContext(core.url, user)).html,
    scheduled_delivery_timestamp: ts,
    read_by_sender: readBySender ?? (defaultReadBySender(ctx.clientName) && !toSelf),
    client: ctx.clientName,
    failed: false,
    failure_message: null,
    delivered: false,
    delivered_message_id: null,
  };
  core.data.scheduled.push(sm);
  emitScheduled(core, sm, "add");
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
  const content = params.str("content");
  const rawType = params.oneOf("type", TYPES);
  const ts = params.int("scheduled_delivery_timestamp");
  const to = readTo(params);
  const topic = params.str("topic");
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
    sm.rendered_content = renderMarkdown(
      core.data,
      sm.content,
      core.clock.now(),
      messageContext(core.url, user),
    ).html;
  }
  if (ts !== undefined) sm.scheduled_delivery_timestamp = ts;
  sm.failed = false;
  sm.failure_message = null;
  emitScheduled(core, sm, "update");
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
      emitScheduled(ctx.core, sm, "remove");
      return {};
    }),
  }),
];
