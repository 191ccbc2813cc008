/**
 * Turning a `to` written for people (a channel name, user emails) into the ids the scheduled
 * messages endpoint insists on (see docs/internals/server-behaviour.md#scheduled-messages: ids
 * only, never names or emails).
 */
import type { Client } from "../../api/create-client.ts";
import { isApiError } from "../../api/errors.ts";
import { scheduleInvalid } from "./scheduled-message-error.ts";

/**
 * Who a scheduled message goes to: a channel by name or id, or a list of users (ids or emails)
 * for a direct message. A single string is always a channel name; wrap one email in a list.
 */
export type Recipient = string | number | readonly (string | number)[];

/** A recipient as ids: a channel id, or the sorted, de-duplicated user ids of a direct message. */
export type ResolvedRecipient = { kind: "channel"; to: number } | { kind: "direct"; to: number[] };

const invalid = (where: string, message: string, cause?: unknown) =>
  scheduleInvalid("to", `${where}: "to" ${message}`, { cause });

const isId = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v > 0;

/** How names and emails become ids: the bot's caches, or its client alone. */
export interface RecipientLookups {
  /** A channel's id by name; rejects with the server's 400 when the bot can see no such channel. */
  channelId(name: string, signal?: AbortSignal): Promise<number>;
  /** A user's id by email; undefined when the bot can see no such user. */
  userId(email: string, signal?: AbortSignal): Promise<number | undefined>;
  /** The channel a name named until a rename the bot saw: its id and its new name. */
  renamed?(name: string): { id: number; to: string } | undefined;
}

/** Lookups that ask the server each time: GET /get_stream_id and GET /users/{email}. */
export function clientLookups(client: Client): RecipientLookups {
  return {
    channelId: async (name, signal) => (await client.channels.id(name, signal ? { signal } : {})).stream_id,
    userId: async (email, signal) => {
      try {
        return (await client.users.get(email, {}, signal ? { signal } : {})).user.user_id;
      } catch (err) {
        // The server's answer for an email the bot may not see.
        if (isApiError(err) && (err.status === 400 || err.status === 404)) return undefined;
        throw err;
      }
    },
  };
}

/**
 * Resolves `to` to ids with `lookups` (a bot's caches answer names and emails they know without a
 * request). Throws {@link ScheduledMessageError} (`SCHEDULE_INVALID`, field `to`) for a channel or
 * user the bot cannot see; `where` starts the message (e.g. `"schedule.at"`).
 */
export async function resolveRecipient(
  lookups: RecipientLookups,
  to: Recipient,
  where: string,
  signal?: AbortSignal,
): Promise<ResolvedRecipient> {
  if (typeof to === "number") {
    if (!isId(to)) throw invalid(where, `${to} is not a channel id (a positive integer).`);
    return { kind: "channel", to };
  }
  if (typeof to === "string") return { kind: "channel", to: await channelId(lookups, to, where, signal) };
  if (!Array.isArray(to)) {
    throw invalid(where, `must be a channel name or id, or a list of user ids or emails; got ${typeof to}.`);
  }
  if (to.length === 0) throw invalid(where, "is an empty list; name at least one user for a direct message.");
  const ids = new Set<number>();
  for (const [i, user] of to.entries()) {
    if (isId(user)) ids.add(user);
    else if (typeof user === "string" && user.trim() !== "")
      ids.add(await userId(lookups, user.trim(), where, signal));
    else throw invalid(where, `[${i}] must be a user id or an email; got ${JSON.stringify(user)}.`);
  }
  return { kind: "direct", to: [...ids].sort((a, b) => a - b) };
}

/**
 * Whether a booking as GET /scheduled_messages lists it goes to `target`: the server lists a
 * channel by its id, and a direct message's users without the sender (`self`), unless it goes to
 * the sender alone.
 */
export function listedFor(
  target: ResolvedRecipient,
  self: number,
  listed: { type: "channel" | "direct"; to: number | number[] },
): boolean {
  if (target.kind === "channel") return listed.type === "channel" && listed.to === target.to;
  if (listed.type !== "direct" || !Array.isArray(listed.to)) return false;
  const others = target.to.filter((id) => id !== self);
  const want = others.length > 0 ? others : [self];
  const got = [...new Set(listed.to)].sort((a, b) => a - b);
  return got.length === want.length && got.every((id, i) => id === want[i]);
}

async function channelId(
  lookups: RecipientLookups,
  name: string,
  where: string,
  signal?: AbortSignal,
): Promise<number> {
  const trimmed = name.trim();
  if (trimmed === "") throw invalid(where, "is an empty channel name.");
  try {
    return await lookups.channelId(trimmed, signal);
  } catch (err) {
    if (!isApiError(err) || err.status !== 400) throw err;
    const renamed = lookups.renamed?.(trimmed);
    const hint = renamed
      ? ` The channel was renamed ${JSON.stringify(renamed.to)} on the server: name it so, or by its id, ${renamed.id}.`
      : trimmed.includes("@")
        ? ` For a direct message, pass a list: to: [${JSON.stringify(trimmed)}].`
        : " Check the spelling, that the channel exists and the bot can see it, or pass its id.";
    throw invalid(where, `names no channel this bot can see: ${JSON.stringify(trimmed)}.${hint}`, err);
  }
}

async function userId(
  lookups: RecipientLookups,
  email: string,
  where: string,
  signal?: AbortSignal,
): Promise<number> {
  const id = await lookups.userId(email, signal);
  if (id !== undefined) return id;
  throw invalid(
    where,
    `names no user this bot can see: ${JSON.stringify(email)} (the email may be hidden from bots; pass the user id instead).`,
  );
}
