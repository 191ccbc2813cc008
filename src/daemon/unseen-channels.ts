/**
 * The channel settings (bot/channel-setting.ts) that name no channel the bot can see: looked up in
 * one GET /streams (the public channels and those the bot is subscribed to), by id or by name
 * without case. `bothost check` reports them located; a bot's start warns of them.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import type { ChannelEntry } from "../bot/channel-setting.ts";
import { formatPath } from "../config/config-problem.ts";
import { suggest } from "../errors/did-you-mean.ts";

/** A channel setting the server has no channel for, the bot's view of it, and a likely meant name. */
export interface UnseenChannel extends ChannelEntry {
  meant?: string;
}

/** The entries among `entries` that name no channel the bot sees (none asked when there are none). */
export async function unseenChannels(
  client: Client,
  entries: readonly ChannelEntry[],
  signal?: AbortSignal,
): Promise<UnseenChannel[]> {
  if (entries.length === 0) return [];
  const { streams } = await client.channels.list({}, signal ? { signal } : {});
  const ids = new Set(streams.map((s) => String(s.stream_id)));
  const names = new Set(streams.map((s) => s.name.toLowerCase()));
  const unseen: UnseenChannel[] = [];
  for (const entry of entries) {
    const value = String(entry.value);
    if (ids.has(value) || names.has(value.toLowerCase())) continue;
    const meant =
      typeof entry.value === "string"
        ? suggest(
            value,
            streams.map((s) => s.name),
          )
        : undefined;
    unseen.push(meant === undefined ? entry : { ...entry, meant });
  }
  return unseen;
}

const ADVICE = "check the spelling (or give the channel's id), and subscribe the bot to a private channel";

/** `entry`'s value as a message names it, with the name likely meant. */
function named(entry: UnseenChannel): string {
  const what = typeof entry.value === "number" ? `channel id ${entry.value}` : `"${entry.value}"`;
  return entry.meant === undefined ? what : `${what} (did you mean "${entry.meant}"?)`;
}

/** What is wrong with `entry`, in words (after its path). */
export function unseenProblem(entry: UnseenChannel): string {
  return `${named(entry)} names no channel the bot can see: ${ADVICE}`;
}

/** At a bot's start: one warning naming each channel setting that names no channel the bot sees; a failed read is one warning too. */
export async function warnUnseenChannels(
  client: Client,
  entries: readonly ChannelEntry[],
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  const unseen = await unseenChannels(client, entries, signal).catch((err: unknown) => {
    if (signal.aborted) return [];
    const reason = err instanceof Error ? err.message : String(err);
    log.warn({ reason }, "could not read the channels to check the ones the settings name");
    return [];
  });
  if (unseen.length === 0) return;
  const list = unseen.map((e) => `${formatPath(e.path)}: ${named(e)}`).join(", ");
  const verb = unseen.length === 1 ? "names no channel" : "name no channels";
  log.warn(
    { settings: unseen.map((e) => formatPath(e.path)) },
    `${list} ${verb} the bot can see: ${ADVICE}.`,
  );
}
