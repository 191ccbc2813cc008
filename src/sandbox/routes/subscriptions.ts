/** GET/POST/DELETE /users/me/subscriptions. */
import { badRequest, missingArgument } from "../http/api-error.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { emitToUsers } from "../queues/delivery.ts";
import { nextId, type StreamRecord, type UserRecord } from "../state/data.ts";
import {
  canAccessContent,
  canAccessMetadata,
  streamByName,
  streamToApi,
  subscription,
  subscriptionToApi,
} from "../state/streams.ts";
import { subscribeUsers, unsubscribeUsers } from "../state/subscribe.ts";
import { userByDeliveryEmail, userById } from "../state/users.ts";

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
  const stream: StreamRecord = {
    stream_id: nextId(data, "stream"),
    name,
    description,
    invite_only: inviteOnly,
    is_web_public: false,
    history_public_to_subscribers: historyPublic ?? !inviteOnly,
    is_archived: false,
    date_created: core.nowSeconds(),
    creator_id: user.user_id,
    folder_id: null,
    recipient_id: nextId(data, "recipient"),
    topics_policy: "inherit",
    message_retention_days: null,
    is_default: false,
  };
  data.streams.push(stream);
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

export const subscriptionRoutes = [
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
          .map((s) => data.streams.find((x) => x.stream_id === s.stream_id)!)
          .filter((stream) => canAccessMetadata(data, user, stream))
          .map((stream) =>
            subscriptionToApi(data, stream, subscription(data, stream.stream_id, user.user_id)!, include),
          ),
      };
    }),
    POST: endpoint(subscribe),
    DELETE: endpoint(unsubscribe),
  }),
];
