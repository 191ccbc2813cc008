/**
 * Where a prompt asks (`where`): another conversation than the dialog's own, a channel topic or
 * a direct message with given people. The question is sent there and its answer taken there;
 * the question's log entry keeps the place, so replays and restarts look for the answer in the
 * same conversation.
 */
import { serverRefusal } from "../../api/refusals.ts";
import { channelKey, dmKey } from "../conversation-key.ts";
import type { AskedIn } from "./dialog-record.ts";
import { optionMistake } from "./prompt-error.ts";

/** The `where` option: a channel and topic (as `ctx.where` gives them), or people to write to directly. */
export type AskWhere = { channel: string; channelId?: number; topic: string } | { direct: readonly number[] };

const where = (detail: string) =>
  optionMistake(`\`where\` must be { channel, topic } or { direct: [user ids] }: ${detail}.`);

/** The `where` option checked (a mistake names what is wrong). */
export function checkWhere(value: unknown): AskWhere {
  if (typeof value !== "object" || value === null) throw where(`got ${JSON.stringify(value)}`);
  const w = value as { channel?: unknown; topic?: unknown; direct?: unknown; channelId?: unknown };
  if ("direct" in w) {
    const ids = w.direct;
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => Number.isSafeInteger(id) && id > 0))
      throw where("direct needs a list of user ids");
    return { direct: ids as number[] };
  }
  if (typeof w.channel !== "string" || w.channel.trim() === "") throw where("channel needs a name");
  if (typeof w.topic !== "string") throw where("topic needs a string");
  const id = typeof w.channelId === "number" && w.channelId > 0 ? { channelId: w.channelId } : {};
  return { channel: w.channel, topic: w.topic, ...id };
}

/**
 * `where` resolved: a channel's id (by `channelId`, the bot's cache of channel names) and the
 * conversation's key; a direct message's key counts the bot as one of its people.
 */
export async function placeOf(
  w: AskWhere,
  selfId: number,
  channelId: (name: string) => Promise<number>,
): Promise<AskedIn> {
  if ("direct" in w) {
    const ids = [...new Set([...w.direct, selfId])];
    // A direct message with the bot alone has no one to answer (and the server refuses the send).
    if (ids.length === 1) throw where("direct needs someone besides the bot");
    return {
      key: dmKey(ids),
      label: "direct message",
      to: { direct: w.direct.filter((id) => id !== selfId) },
    };
  }
  const id =
    w.channelId ?? (await channelId(w.channel).catch((err: unknown) => refusedChannel(w.channel, err)));
  return {
    key: channelKey(id, w.topic),
    label: `#${w.channel} > ${w.topic}`,
    to: { channel: w.channel, channelId: id, topic: w.topic },
  };
}

/** A channel name the server refused to resolve (none of that name) is the option's mistake. */
function refusedChannel(channel: string, err: unknown): never {
  const refusal = serverRefusal(err);
  if (refusal === undefined) throw err;
  throw optionMistake(
    `\`where\` names the channel ${JSON.stringify(channel)}, which the server refused: ${refusal.reason} (${refusal.status} ${refusal.code}).`,
    { cause: err },
  );
}
