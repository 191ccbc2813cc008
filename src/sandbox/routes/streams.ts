/**
 * Channel reads: GET /streams (the nine flags), GET /streams/{id}, GET /streams/{id}/members,
 * GET /get_stream_id and GET /users/me/{stream_id}/topics (protected history honoured).
 */
import { badRequest, missingArgument } from "../http/api-error.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import type { StreamRecord } from "../state/data.ts";
import { visibleTopic } from "../state/message-view.ts";
import {
  canAccessContent,
  canAccessMetadata,
  isSubscribed,
  streamById,
  streamByName,
  streamToApi,
  subscriberIds,
} from "../state/streams.ts";
import { userById } from "../state/users.ts";

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

function accessibleStream(ctx: AuthedContext, id: number): StreamRecord {
  const stream = streamById(ctx.core.data, id);
  if (!stream || !canAccessMetadata(ctx.core.data, ctx.user, stream)) throw badRequest("Invalid channel ID");
  return stream;
}

function topics(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const data = core.data;
  const allowEmpty = params.bool("allow_empty_topic_name") ?? false;
  const stream = streamById(data, Number(ctx.path.stream_id));
  if (!stream || !canAccessContent(data, user, stream)) throw badRequest("Invalid channel ID");
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

export const streamRoutes = [
  route("/streams", { GET: endpoint(listStreams) }),
  route("/streams/{stream_id:int}", {
    GET: endpoint((ctx) => ({
      stream: streamToApi(ctx.core.data, accessibleStream(ctx, Number(ctx.path.stream_id))),
    })),
  }),
  route("/streams/{stream_id:int}/members", {
    GET: endpoint((ctx) => {
      const stream = accessibleStream(ctx, Number(ctx.path.stream_id));
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
];
