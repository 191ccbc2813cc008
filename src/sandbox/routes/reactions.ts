/** POST/DELETE /messages/{id}/reactions, with reaction events to everyone who can see the message. */
import type { SandboxCore } from "../core.ts";
import { ApiError, badRequest, missingArgument } from "../http/api-error.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { emitToUsers } from "../queues/delivery.ts";
import type { MessageRecord, ReactionRecord, UserRecord } from "../state/data.ts";
import { accessMessage, holders } from "../state/message-view.ts";
import { streamById, subscriberIds } from "../state/streams.ts";
import { apiEmail } from "../state/users.ts";

const TYPES = ["unicode_emoji", "realm_emoji", "zulip_extra_emoji"] as const;

function readReaction(ctx: AuthedContext, requireName: boolean): Omit<ReactionRecord, "user_id"> {
  const name = ctx.params.str("emoji_name");
  const code = ctx.params.str("emoji_code");
  const type = ctx.params.literal("reaction_type", TYPES) ?? "unicode_emoji";
  if (name === undefined && requireName) throw missingArgument("emoji_name");
  const knownCode = name === undefined ? undefined : EMOJI_CODES[name];
  const emojiCode = code ?? knownCode;
  if (emojiCode === undefined) throw badRequest(`Emoji '${name}' does not exist`);
  return { emoji_name: name ?? "", emoji_code: emojiCode, reaction_type: type };
}

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
    user: { user_id: user.user_id, email: apiEmail(core.data, user), full_name: user.full_name },
    message_id: msg.id,
    emoji_name: r.emoji_name,
    emoji_code: r.emoji_code,
    reaction_type: r.reaction_type,
  });
}

const same = (a: ReactionRecord, b: Omit<ReactionRecord, "user_id">, userId: number) =>
  a.user_id === userId && a.emoji_code === b.emoji_code && a.reaction_type === b.reaction_type;

export const reactionRoutes = [
  route("/messages/{message_id:int}/reactions", {
    POST: endpoint((ctx) => {
      const wanted = readReaction(ctx, true);
      const msg = accessMessage(ctx.core.data, ctx.user, Number(ctx.path.message_id));
      if (msg.reactions.some((r) => same(r, wanted, ctx.user.user_id))) {
        throw new ApiError(400, "REACTION_ALREADY_EXISTS", "Reaction already exists.");
      }
      const reaction = { ...wanted, user_id: ctx.user.user_id };
      msg.reactions.push(reaction);
      emitReaction(ctx.core, "add", msg, ctx.user, reaction);
      return {};
    }),
    DELETE: endpoint((ctx) => {
      const wanted = readReaction(ctx, false);
      const msg = accessMessage(ctx.core.data, ctx.user, Number(ctx.path.message_id));
      const existing = msg.reactions.find((r) => same(r, wanted, ctx.user.user_id));
      if (!existing) throw new ApiError(400, "REACTION_DOES_NOT_EXIST", "Reaction doesn't exist.");
      msg.reactions = msg.reactions.filter((r) => r !== existing);
      emitReaction(ctx.core, "remove", msg, ctx.user, existing);
      return {};
    }),
  }),
];

/** A small table of unicode emoji names → codes (the common ones bots react with). */
export const EMOJI_CODES: Record<string, string> = {
  "+1": "1f44d",
  thumbs_up: "1f44d",
  like: "1f44d",
  "-1": "1f44e",
  thumbs_down: "1f44e",
  tada: "1f389",
  heart: "2764",
  smile: "1f604",
  slight_smile: "1f642",
  joy: "1f602",
  check: "2705",
  check_mark: "2714",
  cross_mark: "274c",
  x: "274c",
  eyes: "1f440",
  octopus: "1f419",
  rocket: "1f680",
  fire: "1f525",
  star: "2b50",
  warning: "26a0",
  wave: "1f44b",
  thinking: "1f914",
  ok: "1f197",
  working_on_it: "1f6e0",
  hourglass: "231b",
  robot: "1f916",
  clock: "1f570",
  bell: "1f514",
  question: "2753",
  exclamation: "2757",
};
