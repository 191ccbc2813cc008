/**
 * POST/DELETE /messages/{id}/reactions, in the server's order of checks: the message first (one
 * the user cannot access is "Invalid message(s)"), then the emoji. Adding takes the code or the
 * type not given from the name; a reaction already on the message with that code counts as
 * a vote and keeps its name; otherwise name, code and type must agree. Removing needs a name or a
 * code, takes the code from the name when none is given, and checks nothing more than that the
 * user has that reaction. Events go to everyone who holds the message and, for a channel whose
 * history subscribers see, its subscribers; a user who reacts to a channel message they did not
 * receive comes to hold it (the server's historical UserMessage), so its later events reach them.
 */
import type { SandboxCore } from "../core.ts";
import { ApiError, badRequest, missingArgument } from "../http/api-error.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { emitToUsers } from "../queues/emit.ts";
import type { MessageRecord, ReactionRecord, UserRecord } from "../state/data.ts";
import { emojiByName, emojiProblem } from "../state/emoji.ts";
import { accessMessage, holders } from "../state/message-view.ts";
import { streamById, subscriberIds } from "../state/streams.ts";
import { apiEmail } from "../state/users.ts";

type Wanted = Omit<ReactionRecord, "user_id">;

const emojiDoesNotExist = (name: string) => badRequest(`Emoji '${name}' does not exist`);

function addReaction(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const name = params.str("emoji_name");
  let code = params.str("emoji_code");
  let type = params.str("reaction_type");
  if (name === undefined) throw missingArgument("emoji_name");
  const msg = accessMessage(core.data, user, Number(ctx.path.message_id));
  if (code === undefined || type === undefined) {
    const known = emojiByName(name);
    if (!known) throw emojiDoesNotExist(name);
    // Only the one not given comes from the name; a given one is kept and checked below.
    code ??= known.emoji_code;
    type ??= known.reaction_type;
  }
  const wanted: Wanted = { emoji_name: name, emoji_code: code, reaction_type: type };
  if (msg.reactions.some((r) => same(r, wanted) && r.user_id === user.user_id)) {
    throw new ApiError(400, "REACTION_ALREADY_EXISTS", "Reaction already exists.");
  }
  const voted = msg.reactions.find((r) => same(r, wanted));
  if (voted) wanted.emoji_name = voted.emoji_name;
  else {
    const problem = emojiProblem(name, code, type);
    if (problem) throw badRequest(problem);
  }
  if (msg.flags[String(user.user_id)] === undefined) msg.flags[String(user.user_id)] = ["read", "historical"];
  const reaction: ReactionRecord = { ...wanted, user_id: user.user_id };
  msg.reactions.push(reaction);
  emitReaction(core, "add", msg, user, reaction);
  return {};
}

function removeReaction(ctx: AuthedContext) {
  const { core, user, params } = ctx;
  const name = params.str("emoji_name");
  let code = params.str("emoji_code");
  const type = params.str("reaction_type") ?? "unicode_emoji";
  const msg = accessMessage(core.data, user, Number(ctx.path.message_id));
  if (code === undefined) {
    if (name === undefined) {
      throw badRequest("At least one of the following arguments must be present: emoji_name, emoji_code");
    }
    const known = emojiByName(name);
    if (!known) throw emojiDoesNotExist(name);
    code = known.emoji_code;
  }
  const wanted = { emoji_code: code, reaction_type: type };
  const existing = msg.reactions.find((r) => same(r, wanted) && r.user_id === user.user_id);
  if (!existing) throw new ApiError(400, "REACTION_DOES_NOT_EXIST", "Reaction doesn't exist.");
  msg.reactions = msg.reactions.filter((r) => r !== existing);
  emitReaction(core, "remove", msg, user, existing);
  return {};
}

const same = (a: Pick<ReactionRecord, "emoji_code" | "reaction_type">, b: typeof a) =>
  a.emoji_code === b.emoji_code && a.reaction_type === b.reaction_type;

/** Users with access to the message: holders plus, for channels with shared history, subscribers. */
function audience(core: SandboxCore, msg: MessageRecord): number[] {
  const ids = new Set(holders(msg));
  if (msg.type === "stream") {
    const stream = streamById(core.data, msg.stream_id!);
    if (stream && (stream.history_public_to_subscribers || !stream.invite_only)) {
      for (const id of subscriberIds(core.data, stream.stream_id)) ids.add(id);
    }
  }
  return [...ids];
}

function emitReaction(
  core: SandboxCore,
  op: "add" | "remove",
  msg: MessageRecord,
  user: UserRecord,
  r: ReactionRecord,
) {
  emitToUsers(core, audience(core, msg), {
    type: "reaction",
    op,
    user_id: user.user_id,
    // Deprecated, but the server still sends it and the API description still requires it.
    user: { user_id: user.user_id, email: apiEmail(core.data, user), full_name: user.full_name },
    message_id: msg.id,
    emoji_name: r.emoji_name,
    emoji_code: r.emoji_code,
    reaction_type: r.reaction_type,
  });
}

export const reactionRoutes = [
  route("/messages/{message_id:int}/reactions", {
    POST: endpoint(addReaction),
    DELETE: endpoint(removeReaction),
  }),
];
