/**
 * Channel reads: GET /streams (the nine flags), GET /streams/{id}, GET /streams/{id}/members,
 * GET /get_stream_id and GET /users/me/{stream_id}/topics (protected history honoured); a
 * channel's rename, PATCH /streams/{id} with `new_name`.
 */
import { ApiError, badRequest, missingArgument } from "../http/api-error.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { addStream } from "../org/build-state.ts";
import { emitToUsers } from "../queues/emit.ts";
import type { StreamRecord, UserRecord } from "../state/data.ts";
import { visibleTopic } from "../state/message-view.ts";
import {
  administersChannel,
  canAccessContent,
  canAccessMetadata,
  isSubscribed,
  renameStream,
  streamById,
  streamByName,
  streamToApi,
  subscriberIds,
  subscribeUsers,
  subscription,
  subscriptionToApi,
  unsubscribeUsers,
} from "../state/streams.ts";
import { userByDeliveryEmail, userById } from "../state/users.ts";

function listStreams(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const data = core.data;
  const includePublic = params.bool("include_public") ?? true;
  const includeWebPublic = params.bool("include_web_public") ?? false;
  const includeSubscribed = params.bool("include_subscribed") ?? true;
  const excludeArchived = params.bool("exclude_archived") ?? true;
  const includeAllActive = params.bool("include_all_active") ?? false;
  const includeAll = params.bool("include_all") ?? false;
  const includeDefault = params.bool("include_default") ?? false;
  const includeOwnerSubscribed = params.bool("include_owner_subscribed") ?? false;
  const includeCanAccessContent = params.bool("include_can_access_content") ?? false;
  if (includeAllActive && user.role > 200) throw badRequest("User not authorized for this query");
  const owner = user.is_bot && user.bot_owner_id !== null ? userById(data, user.bot_owner_id) : undefined;
  const wanted = (s: StreamRecord) =>
    ((includeAll || includeAllActive) && canAccessMetadata(data, user, s)) ||
    (includePublic && !s.invite_only && user.role !== 600) ||
    (includeWebPublic && s.is_web_public) ||
    (includeSubscribed && isSubscribed(data, s.stream_id, user.user_id)) ||
    (includeDefault && s.is_default) ||
    (includeOwnerSubscribed && owner !== undefined && isSubscribed(data, s.stream_id, owner.user_id)) ||
    (includeCanAccessContent && canAccessContent(data, user, s));
  const streams = data.streams
    .filter((s) => wanted(s) && !(excludeArchived && s.is_archived))
    .sort((a, b) => a.name.localeCompare(b.name));
  return { streams: streams.map((s) => streamToApi(data, s)) };
}

/** The path's channel if the user may see it (or, with canAccessContent, read it). */
function accessibleStream(ctx: AuthedContext, canAccess = canAccessMetadata): StreamRecord {
  const stream = streamById(ctx.core.data, Number(ctx.path.stream_id));
  if (!stream || !canAccess(ctx.core.data, ctx.user, stream)) throw badRequest("Invalid channel ID");
  return stream;
}

function topics(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const data = core.data;
  const allowEmpty = params.bool("allow_empty_topic_name") ?? false;
  const stream = accessibleStream(ctx, canAccessContent);
  const me = String(user.user_id);
  // Protected history: only messages the user actually received (sent after they subscribed).
  const shared = stream.history_public_to_subscribers || !stream.invite_only;
  const byTopic = new Map<string, { name: string; max_id: number }>();
  for (const m of data.messages) {
    if (m.stream_id !== stream.stream_id || (!shared && m.flags[me] === undefined)) continue;
    const key = m.topic.toLowerCase();
    const entry = byTopic.get(key);
    if (!entry || m.id > entry.max_id) byTopic.set(key, { name: m.topic, max_id: m.id });
  }
  return {
    topics: [...byTopic.values()]
      .sort((a, b) => b.max_id - a.max_id)
      .map((t) => ({ name: visibleTopic(data, t.name, allowEmpty), max_id: t.max_id })),
  };
}

function principals(ctx: AuthedContext): UserRecord[] {
  const found = ctx.params.json("principals");
  if (!found) return [ctx.user];
  if (!Array.isArray(found.value)) throw badRequest("principals is not a list");
  return found.value.map((p) => {
    const user =
      typeof p === "number" ? userById(ctx.core.data, p) : userByDeliveryEmail(ctx.core.data, String(p));
    if (!user?.is_active || user.system_bot) {
      throw badRequest(typeof p === "number" ? `No such user` : `User not found: ${String(p)}`);
    }
    return user;
  });
}

function createStream(
  ctx: AuthedContext,
  name: string,
  description: string,
  inviteOnly: boolean,
  historyPublic: boolean | undefined,
): StreamRecord {
  const { core, user } = ctx;
  const data = core.data;
  if (user.role === 600) throw badRequest("Insufficient permission");
  const stream = addStream(data, {
    name,
    description,
    invite_only: inviteOnly,
    history_public_to_subscribers: historyPublic ?? !inviteOnly,
    date_created: core.clock.seconds(),
    creator_id: user.user_id,
  });
  const viewers = data.users.filter(
    (u) => u.is_active && (inviteOnly ? u.user_id === user.user_id : u.role !== 600),
  );
  emitToUsers(
    core,
    viewers.map((u) => u.user_id),
    { type: "stream", op: "create", streams: [streamToApi(data, stream)] },
  );
  return stream;
}

function subscribe(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const subsJson = params.json("subscriptions");
  const inviteOnly = params.bool("invite_only") ?? false;
  const historyPublic = params.bool("history_public_to_subscribers");
  params.bool("announce");
  const targets = principals(ctx);
  const fatal = params.bool("authorization_errors_fatal") ?? true;
  if (!subsJson) throw missingArgument("subscriptions");
  if (!Array.isArray(subsJson.value)) throw badRequest("subscriptions is not a list");
  const wanted = subsJson.value.map((s, i) => {
    if (typeof s !== "object" || s === null) throw badRequest(`subscriptions[${i}] is not a dict`);
    const o = s as { name?: unknown; description?: unknown };
    if (typeof o.name !== "string")
      throw badRequest(`subscriptions[${i}]["name"] field is missing: Field required`);
    const name = o.name.trim();
    if (name === "") throw badRequest("Channel name can't be empty.");
    if ([...name].length > 60) throw badRequest("Channel name too long (limit: 60 characters).");
    return { name, description: typeof o.description === "string" ? o.description : "" };
  });
  if (targets.some((t) => t.user_id !== user.user_id) && user.role === 600)
    throw badRequest("Insufficient permission");
  const subscribed: Record<string, string[]> = {};
  const already: Record<string, string[]> = {};
  const unauthorized: string[] = [];
  for (const w of wanted) {
    let stream = streamByName(core.data, w.name);
    if (stream && !canAccessContent(core.data, user, stream)) {
      if (fatal) throw badRequest(`Unable to access channel (${stream.name}).`);
      unauthorized.push(stream.name);
      continue;
    }
    stream ??= createStream(ctx, w.name, w.description, inviteOnly, historyPublic);
    for (const t of targets) {
      const key = String(t.user_id);
      const bucket = subscription(core.data, stream.stream_id, t.user_id) ? already : subscribed;
      bucket[key] = [...(bucket[key] ?? []), stream.name];
    }
    subscribeUsers(core, stream, targets);
  }
  return { subscribed, already_subscribed: already, ...(fatal ? {} : { unauthorized }) };
}

function unsubscribe(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const names = params.stringList("subscriptions");
  const targets = principals(ctx);
  if (names === undefined) throw missingArgument("subscriptions");
  if (targets.some((t) => t.user_id !== user.user_id) && user.role > 200)
    throw badRequest("Insufficient permission");
  const streams = names.map((n) => ({ n, s: streamByName(core.data, n) }));
  const missing = streams.filter((x) => !x.s).map((x) => x.n);
  if (missing.length > 0) throw badRequest(`Channel(s) (${missing.join(", ")}) do not exist`);
  const removed: string[] = [];
  const notRemoved: string[] = [];
  for (const { s } of streams) {
    const gone = unsubscribeUsers(core, s!, targets);
    (gone.length > 0 ? removed : notRemoved).push(s!.name);
  }
  return { removed, not_removed: notRemoved };
}

/** PATCH /streams/{id}: a rename (`new_name`), by an administrator or the channel's creator. */
function updateStream(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const stream = accessibleStream(ctx);
  if (user.role > 200 && !administersChannel(core.data, user, stream))
    throw badRequest("You do not have permission to administer this channel.");
  const newName = params.str("new_name");
  if (newName !== undefined) {
    if (newName.trim() === stream.name) throw badRequest("Channel already has that name.");
    const problem = renameStream(core, stream, newName);
    if (problem?.taken !== undefined) {
      throw new ApiError(409, "CHANNEL_ALREADY_EXISTS", problem.msg, { channel_name: problem.taken });
    }
    if (problem) throw badRequest(problem.msg);
  }
  return {};
}

export const streamRoutes = [
  route("/streams", { GET: endpoint(listStreams) }),
  route("/streams/{stream_id:int}", {
    GET: endpoint((ctx) => ({
      stream: streamToApi(ctx.core.data, accessibleStream(ctx)),
    })),
    PATCH: endpoint(updateStream),
  }),
  route("/streams/{stream_id:int}/members", {
    GET: endpoint((ctx) => {
      const stream = accessibleStream(ctx);
      return { subscribers: subscriberIds(ctx.core.data, stream.stream_id) };
    }),
  }),
  route("/get_stream_id", {
    GET: endpoint((ctx) => {
      const name = ctx.params.str("stream");
      if (name === undefined) throw missingArgument("stream");
      const stream = streamByName(ctx.core.data, name);
      if (!stream || !canAccessMetadata(ctx.core.data, ctx.user, stream))
        throw badRequest(`Invalid channel name '${name}'`);
      return { stream_id: stream.stream_id };
    }),
  }),
  route("/users/me/{stream_id:int}/topics", { GET: endpoint(topics) }),
  route("/users/me/subscriptions", {
    GET: endpoint(({ core, user, params }) => {
      const raw = params.str("include_subscribers");
      const include = raw === "true" || raw === "partial";
      if (raw !== undefined && !["true", "false", "partial"].includes(raw))
        throw badRequest("include_subscribers is not a boolean");
      const data = core.data;
      const subs = data.subscriptions.filter((s) => s.user_id === user.user_id && s.active);
      return {
        subscriptions: subs
          .map((s) => ({ s, stream: streamById(data, s.stream_id)! }))
          .filter(({ stream }) => canAccessMetadata(data, user, stream))
          .map(({ s, stream }) => subscriptionToApi(data, stream, s, include)),
      };
    }),
    POST: endpoint(subscribe),
    DELETE: endpoint(unsubscribe),
  }),
];
