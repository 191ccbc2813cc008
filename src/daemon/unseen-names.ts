/**
 * The named settings (bot/named-settings.ts) that name nothing the bot can see on the server: a
 * channel among those GET /streams lists (the public ones and those the bot is subscribed to), a
 * user group among those GET /user_groups lists (deactivated ones left out), a user among those
 * GET /users lists (by their shown or real email, as `ctx.users.get` finds them); by id, or by
 * name without case, as the bot's helpers find them. One read of each list a bot's settings need.
 * `bothost check` reports them located; a bot's start warns of them.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import type { NamedEntry } from "../bot/named-settings.ts";
import { formatPath, formatProblems } from "../config/config-problem.ts";
import type { ConfigSource } from "../config/config-source.ts";
import { suggest } from "../errors/did-you-mean.ts";

/** A named setting the server has nothing for, as the bot sees it, and a likely meant name. */
export interface UnseenName extends NamedEntry {
  meant?: string;
}

/** What the bot sees of each kind: ids and names. */
type Seen = { ids: Set<string>; names: string[] };

async function seen(client: Client, kind: NamedEntry["kind"], signal?: AbortSignal): Promise<Seen> {
  // A warning at a start, no person waiting on it: the budget's background lane.
  const options = { lane: "background" as const, ...(signal ? { signal } : {}) };
  if (kind === "snippet") {
    const { saved_snippets } = await client.savedSnippets.list(options);
    return { ids: new Set(), names: saved_snippets.map((s) => s.title) };
  }
  if (kind === "user") {
    const { members } = await client.users.list({}, options);
    const emails = members.flatMap((u) => [u.email, ...(u.delivery_email ? [u.delivery_email] : [])]);
    return { ids: new Set(members.map((u) => String(u.user_id))), names: emails };
  }
  const listed =
    kind === "channel"
      ? (await client.channels.list({}, options)).streams.map((s) => ({ id: s.stream_id, name: s.name }))
      : (await client.userGroups.list({}, options)).user_groups;
  return { ids: new Set(listed.map((x) => String(x.id))), names: listed.map((x) => x.name) };
}

/** The entries among `entries` that name nothing the bot sees (nothing asked when there are none). */
export async function unseenNames(
  client: Client,
  entries: readonly NamedEntry[],
  signal?: AbortSignal,
): Promise<UnseenName[]> {
  const lists = new Map<NamedEntry["kind"], Seen>();
  for (const { kind } of entries) if (!lists.has(kind)) lists.set(kind, await seen(client, kind, signal));
  const unseen: UnseenName[] = [];
  for (const entry of entries) {
    const { ids, names } = lists.get(entry.kind)!;
    const value = String(entry.value);
    // A snippet's title is matched exactly, as the bots look it up; the other names without case.
    const same = (n: string) =>
      entry.kind === "snippet" ? n === value : n.toLowerCase() === value.toLowerCase();
    if (ids.has(value) || names.some(same)) continue;
    const meant = typeof entry.value === "string" ? suggest(value, names) : undefined;
    unseen.push(meant === undefined ? entry : { ...entry, meant });
  }
  return unseen;
}

const NOUN = { channel: "channel", group: "user group", user: "user", snippet: "saved snippet" } as const;
const ADVICE = {
  channel: "check the spelling (or give the channel's id), and subscribe the bot to a private channel",
  group: "check the spelling (or give the group's id)",
  user: "check the address (or give the user's id); where emails are hidden, give the one the server shows",
  snippet: "create it as the bot's account, or fix the title (matched exactly)",
} as const;

/** `entry`'s value as a message names it, with the name likely meant. */
function named(entry: UnseenName): string {
  const what = typeof entry.value === "number" ? `${NOUN[entry.kind]} id ${entry.value}` : `"${entry.value}"`;
  return entry.meant === undefined ? what : `${what} (did you mean "${entry.meant}"?)`;
}

/** What is wrong with `entry`, in words (after its path). */
export function unseenProblem(entry: UnseenName): string {
  return `${named(entry)} names no ${NOUN[entry.kind]} the bot can see: ${ADVICE[entry.kind]}`;
}

/**
 * At a bot's start: one warning per kind naming each setting that names nothing the bot sees; a
 * failed read is one warning too.
 */
export async function warnUnseenNames(
  client: Client,
  entries: readonly NamedEntry[],
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  const unseen = await unseenNames(client, entries, signal).catch((err: unknown) => {
    if (signal.aborted) return [];
    const reason = err instanceof Error ? err.message : String(err);
    log.warn(
      { reason },
      "could not read the channels, groups, users and snippets to check the ones the settings name",
    );
    return [];
  });
  for (const kind of ["channel", "group", "user", "snippet"] as const) {
    const of = unseen.filter((e) => e.kind === kind);
    if (of.length === 0) continue;
    const list = of.map((e) => `${formatPath(e.path)}: ${named(e)}`).join(", ");
    const verb = of.length === 1 ? `names no ${NOUN[kind]}` : `name no ${NOUN[kind]}s`;
    log.warn(
      { settings: of.map((e) => formatPath(e.path)) },
      `${list} ${verb} the bot can see: ${ADVICE[kind]}.`,
    );
  }
}

/**
 * A channel renamed on the server while the bot runs: one warning naming each setting that gives
 * its old name, which names no channel now (what uses it fails, as it would after a restart).
 */
export function warnRenamedChannel(
  entries: readonly NamedEntry[],
  rename: { id: number; from: string; to: string },
  log: Pick<Logger, "warn">,
): void {
  const { id, from, to } = rename;
  const of = entries.filter(
    (e) =>
      e.kind === "channel" && typeof e.value === "string" && e.value.toLowerCase() === from.toLowerCase(),
  );
  if (of.length === 0) return;
  const paths = of.map((e) => formatPath(e.path));
  log.warn(
    { settings: paths, channelId: id },
    `${paths.join(", ")}: "${from}" names no channel now: the channel was renamed "${to}" on the server; set its new name (or its id, ${id}) in the config, as what uses the old name fails until then.`,
  );
}

/**
 * After a reload, for the bots it started here: a located line for each named setting that names
 * nothing the bot sees (as `bothost check` prints it), or one line saying the lists could not be
 * read; empty when all is well. The reload is applied all the same: these are warnings.
 */
export async function unseenAfterReload(
  bots: readonly { name: string; named: readonly NamedEntry[]; client: Client | undefined }[],
  source: ConfigSource,
): Promise<string[]> {
  const lines: string[] = [];
  for (const { name, named, client } of bots) {
    if (named.length === 0 || client === undefined) continue;
    try {
      const unseen = await unseenNames(client, named);
      if (unseen.length > 0)
        lines.push(
          ...formatProblems(unseen.map((e) => source.problem(e.path, unseenProblem(e)))).split("\n"),
        );
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      lines.push(
        `bots.${name}: could not read the channels, groups, users and snippets to check the ones its settings name: ${reason}`,
      );
    }
  }
  return lines.filter((line) => line !== "");
}
