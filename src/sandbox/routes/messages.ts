/**
 * GET /messages (anchored windows over a narrow), GET /messages/{message_id}, POST /messages
 * (shared with control.sendAs), and POST /typing (see
 * docs/internals/server-behaviour.md#event-shapes): direct typing goes to every recipient (the
 * sender included) with receives_typing_notifications; channel typing only to queues that declared
 * stream_typing_notifications, none for channels over 100 subscribers.
 */
import type { SandboxCore } from "../core.ts";
import { ApiError, badRequest, missingArgument } from "../http/api-error.ts";
import type { Params } from "../http/params.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { type EventBody, emitToUsers } from "../queues/emit.ts";
import type { UserRecord } from "../state/data.ts";
import {
  buildFilter,
  type NarrowTerm,
  parseNarrowParam,
  searchableMessages,
} from "../state/message-filter.ts";
import { accessMessage, flagsOf, messageToApi, visibleTopic } from "../state/message-view.ts";
import {
  normalizeContent,
  normalizeTopic,
  notifyByBot,
  resolveTarget,
  type SendTarget,
  sendMessage,
} from "../state/send-message.ts";
import { canAccessContent, streamById, streamByName, subscriberIds } from "../state/streams.ts";
import { setting } from "../state/user-settings.ts";
import { apiEmail, userById } from "../state/users.ts";

const LARGER_THAN_MAX_MESSAGE_ID = 10000000000000000;
const MAX_MESSAGES_PER_FETCH = 5000;

/**
 * The anchor asked for: a message id (clamped), 0 for "oldest", past every id for "newest", or
 * undefined for the first unread. An anchor left out is the server's BAD_REQUEST "Missing 'anchor'
 * argument." (with its full stop and no var_name: the view checks it, not the parameter parser).
 */
function parseAnchor(raw: string | undefined, useFirstUnread: boolean): number | undefined {
  if (useFirstUnread || raw === "first_unread") return undefined;
  if (raw === undefined) throw badRequest("Missing 'anchor' argument.");
  if (raw === "newest") return LARGER_THAN_MAX_MESSAGE_ID;
  if (raw === "oldest") return 0;
  if (!/^-?\d+$/.test(raw)) throw badRequest("Invalid anchor");
  return Math.max(0, Math.min(Number(raw), LARGER_THAN_MAX_MESSAGE_ID));
}

/** The parameters `message_ids` cannot be sent with (the server's IncompatibleParametersError). */
const WINDOW_PARAMS = "num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor";

function getMessages(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const data = core.data;
  const anchorRaw = params.str("anchor");
  const includeAnchor = params.bool("include_anchor") ?? true;
  // NonNegativeInt on the server: a window size or message id below 0 "is too small".
  const numBefore = params.int("num_before", { min: 0 }) ?? 0;
  const numAfter = params.int("num_after", { min: 0 }) ?? 0;
  const narrowJson = params.json("narrow");
  const clientGravatar = params.bool("client_gravatar") ?? true;
  const applyMarkdown = params.bool("apply_markdown") ?? true;
  const useFirstUnread = params.bool("use_first_unread_anchor") ?? false;
  const allowEmptyTopicName = params.bool("allow_empty_topic_name") ?? false;
  const messageIds = params.intList("message_ids", { min: 0 });
  if (messageIds !== undefined && (numBefore || numAfter || anchorRaw !== undefined || useFirstUnread)) {
    throw badRequest(`Unsupported parameter combination: ${WINDOW_PARAMS}`, { parameters: WINDOW_PARAMS });
  }
  const terms: NarrowTerm[] = narrowJson ? parseNarrowParam(narrowJson.value) : [];
  const anchorAsked = messageIds === undefined ? parseAnchor(anchorRaw, useFirstUnread) : undefined;
  if ((messageIds?.length ?? numBefore + numAfter) > MAX_MESSAGES_PER_FETCH) {
    throw badRequest(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  }
  if (numBefore > 0 && numAfter > 0 && !includeAnchor) {
    throw badRequest("The anchor can only be excluded at an end of the range");
  }
  const view = (m: (typeof data.messages)[number]) => ({
    ...messageToApi(data, m, user, { applyMarkdown, clientGravatar, allowEmptyTopicName }),
    flags: flagsOf(m, user),
  });
  const matches = buildFilter(data, user, terms);
  const candidates = searchableMessages(data, user, terms).filter(matches);

  if (messageIds !== undefined) {
    const wanted = new Set(messageIds);
    return {
      messages: candidates.filter((m) => wanted.has(m.id)).map(view),
      history_limited: false,
      found_anchor: false,
      found_oldest: false,
      found_newest: false,
    };
  }
  const me = String(user.user_id);
  const anchor =
    anchorAsked ??
    candidates.find((m) => m.flags[me] !== undefined && !m.flags[me]!.includes("read"))?.id ??
    LARGER_THAN_MAX_MESSAGE_ID;

  const toRight = anchor >= LARGER_THAN_MAX_MESSAGE_ID;
  const toLeft = anchor === 0;
  const before =
    numBefore === 0 ? [] : candidates.filter((m) => (toRight ? true : m.id < anchor)).slice(-numBefore);
  const atAnchor = includeAnchor && !toRight ? candidates.filter((m) => m.id === anchor) : [];
  const after = toRight || numAfter === 0 ? [] : candidates.filter((m) => m.id > anchor).slice(0, numAfter);
  return {
    messages: [...before, ...atAnchor, ...after].map(view),
    anchor,
    found_anchor: atAnchor.length === 1,
    found_oldest: toLeft || before.length < numBefore,
    found_newest: toRight || after.length < numAfter,
    history_limited: false,
  };
}

const TYPES = ["direct", "private", "stream", "channel"] as const;

/** Read POST /messages parameters, send, and return `{ id }`. */
export function sendFromParams(core: SandboxCore, user: UserRecord, params: Params, clientName: string) {
  const type = params.literal("type", TYPES);
  if (type === undefined) throw missingArgument("type");
  const to = params.str("to");
  const topic = params.str("topic", { aliases: ["subject"] });
  const content = params.requiredStr("content");
  const localId = params.str("local_id");
  const queueId = params.str("queue_id");
  const readBySender = params.bool("read_by_sender");
  const isStream = type === "stream" || type === "channel";
  if (to === undefined) throw badRequest(isStream ? "Missing channel" : "Message must have recipients");
  if (isStream && topic === undefined) throw badRequest("Missing topic");
  if (isStream) normalizeContent(content);
  let target: SendTarget;
  try {
    target = resolveTarget(core, type, to, topic);
  } catch (err) {
    // Only a channel looked up and not found: a `to` refused before (its type) tells nobody.
    if (err instanceof ApiError && err.wireCode === "STREAM_DOES_NOT_EXIST")
      notifyOwnerOfMissingStream(core, user, type, to);
    throw err;
  }
  const msg = sendMessage(core, user, target, content, {
    client: clientName,
    readBySender,
    local: localId !== undefined && queueId !== undefined ? { queueId, localId } : undefined,
  });
  return { id: msg.id };
}

/**
 * A bot sending to a missing channel makes the Notification Bot tell its owner (see
 * docs/internals/server-behaviour.md#sending-messages).
 */
function notifyOwnerOfMissingStream(core: SandboxCore, user: UserRecord, type: string, to: string): void {
  if (!user.is_bot || user.bot_owner_id === null || (type !== "stream" && type !== "channel")) return;
  // A channel id, bare or as a JSON list of one (the server tells the owner of those too).
  const id = /^\s*\[?\s*(\d+)\s*\]?\s*$/.exec(to)?.[1];
  if (id === undefined && (/^\s*[["]/.test(to) || streamByName(core.data, to))) return;
  if (id !== undefined && streamById(core.data, Number(id))) return;
  const owner = userById(core.data, user.bot_owner_id);
  if (!owner?.is_active) return;
  const bot = `Your bot @_**${user.full_name}|${user.user_id}**`;
  const text =
    id === undefined
      ? `${bot} tried to send a message to channel #**${to}**, but that channel does not exist. ` +
        "Click [here](#channels/new) to create it."
      : `${bot} tried to send a message to channel ID ${id}, but there is no channel with that ID.`;
  notifyByBot(core, owner, text);
}

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
  sendDirectTyping(core, user, to, { type: "typing", op, message_type: "direct", sender });
  return {};
}

function sendDirectTyping(core: SandboxCore, user: UserRecord, to: number[], event: EventBody): void {
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
  const recipients = unique.map((p) => ({ user_id: p.user_id, email: apiEmail(data, p) }));
  emitToUsers(
    core,
    unique.filter(wantsTyping).map((p) => p.user_id),
    { ...event, recipients },
  );
}

export const messageRoutes = [
  route("/messages", { GET: endpoint(getMessages) }),
  route("/messages/{message_id:int}", {
    GET: endpoint(({ core, user, params, path }) => {
      const applyMarkdown = params.bool("apply_markdown") ?? true;
      const allowEmptyTopicName = params.bool("allow_empty_topic_name") ?? false;
      const msg = accessMessage(core.data, user, Number(path.message_id));
      return {
        raw_content: msg.content,
        message: {
          ...messageToApi(core.data, msg, user, {
            applyMarkdown,
            clientGravatar: false,
            allowEmptyTopicName,
          }),
          flags: flagsOf(msg, user),
        },
      };
    }),
  }),
  route("/messages", {
    POST: endpoint((ctx) => sendFromParams(ctx.core, ctx.user, ctx.params, ctx.clientName), {
      incomingWebhookBots: true,
    }),
  }),
  route("/typing", { POST: endpoint(typing) }),
];
