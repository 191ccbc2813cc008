import { ExitCode } from "../config/exit-codes.ts";
import { isBothostError } from "../errors/bothost-error.ts";
import type {
  DeadLetterOffice,
  DeadLetterOutcome,
  DeadLetterSelection,
} from "../state/dead-letter-office.ts";
import type { DeadLetter } from "../state/dead-letters.ts";
import { isStateError } from "../state/state-error.ts";
import type { StateBackend } from "../state/state-store.ts";
import { commandArgs, configOption, reportStartupError, table, unknownWord, usageError } from "./args.ts";
import type { DaemonClient } from "./daemon-client.ts";

export const failedHelp = `Usage: bothost failed <list|show|retry|drop> [options]

  bothost failed list [--bot NAME] [--json]      The dead letters, oldest first
  bothost failed show ID [--json]                One letter: its error, stack and event
  bothost failed retry ID… | --all [--bot NAME]  Handle them again (now if the daemon runs,
                                                 else at its start)
  bothost failed drop ID… | --all [--bot NAME]   Delete them for good

A dead letter is an event whose handler failed every attempt (retries in the bot's config) or
threw NoRetry. Ids look like moderator/12. The letters of a bot no longer in the config (removed
or renamed) are listed too, marked as such: they can be shown and dropped, not retried. An
outgoing-webhook delivery kept while its handler still runs in the daemon is no failure: list
(and so --all) leaves it out, show says its run goes on; it goes once that run is over. With the
daemon running, the command asks it on its admin socket (in the state directory; with
state.redis, in $TMPDIR/bothost-<uid>/), else through
its HTTP listener (http.listen; http.admin_token when that is not a loopback address): then only
state: and http: of the config must be sound. With no daemon answering, it works on the state
store directly.

Options:
  -c, --config FILE   The config file (default: $BOTHOST_CONFIG, else ./bothost.yaml)
      --bot NAME      Only this bot's letters
      --all           Every letter (of --bot, or of every bot)
      --json          Print JSON (list: an array of letters)
  -h, --help          Show this text
`;

const ACTIONS = ["list", "show", "retry", "drop"] as const;
type Action = (typeof ACTIONS)[number];

const usage = (message: string) => usageError("failed", message);

export async function runFailedCommand(argv: string[]): Promise<number> {
  const args = commandArgs(
    "failed",
    argv,
    failedHelp,
    { ...configOption, bot: { type: "string" }, all: { type: "boolean" }, json: { type: "boolean" } },
    true,
  );
  if (typeof args === "number") return args;
  const { values, positionals } = args;
  const [action, ...ids] = positionals;
  if (!ACTIONS.includes(action as Action)) {
    return usage(
      action === undefined
        ? "say what to do: list, show, retry or drop"
        : unknownWord("action", action, ACTIONS),
    );
  }
  const problem = checkArguments(action as Action, ids, values);
  if (problem) return usage(problem);
  let desk: LetterDesk | undefined;
  try {
    desk = await openLetterDesk(values.config);
    return await perform(desk, action as Action, ids, values);
  } catch (err) {
    // `--bot` naming no bot of the daemon's: said as without a daemon (`UNKNOWN_BOT`, exit 2).
    const unknownBot = isBothostError(err) && isBothostError(err.cause) && err.cause.code === "UNKNOWN_BOT";
    return reportStartupError(unknownBot ? (err as Error).cause : err, "failed");
  } finally {
    await desk?.close().catch(() => {});
  }
}

/** A dead letter's id: `<bot>/<n>`, as the letters are numbered in their bot's list. */
const LETTER_ID = /^[^/\s]+\/\d+$/;

function checkArguments(
  action: Action,
  ids: string[],
  o: { bot?: string; all?: boolean },
): string | undefined {
  if (action === "list") return ids.length > 0 ? `list takes no ids (got ${ids[0]})` : undefined;
  const malformed = ids.find((id) => !LETTER_ID.test(id));
  if (malformed !== undefined)
    return `"${malformed}" is no dead letter id: an id is the bot's name, a slash and the letter's number, like moderator/12`;
  if (action === "show") return ids.length === 1 ? undefined : "show takes exactly one id, like moderator/12";
  if (o.all && ids.length > 0) return `${action} takes ids or --all, not both`;
  if (!o.all && ids.length === 0) return `${action} needs ids (like moderator/12) or --all`;
  if (o.bot !== undefined && !o.all) return "--bot goes with --all (ids already name their bot)";
  return undefined;
}

async function perform(
  desk: LetterDesk,
  action: Action,
  ids: string[],
  o: { bot?: string; all?: boolean; json?: boolean },
): Promise<number> {
  const out = (text: string) => process.stdout.write(text);
  if (action === "list") {
    const letters = await desk.list(o.bot);
    out(o.json ? `${JSON.stringify(letters, null, 2)}\n` : formatList(letters));
    return ExitCode.Ok;
  }
  if (action === "show") {
    const letter = await desk.get(ids[0]!);
    if (!letter) {
      process.stderr.write(`bothost failed: no dead letter ${ids[0]} (see "bothost failed list")\n`);
      return ExitCode.RuntimeFailure;
    }
    out(o.json ? `${JSON.stringify(letter, null, 2)}\n` : formatOne(letter));
    return ExitCode.Ok;
  }
  const selection: DeadLetterSelection = o.all ? { all: true, ...(o.bot ? { bot: o.bot } : {}) } : { ids };
  const outcome = action === "retry" ? await desk.retry(selection) : await desk.drop(selection);
  out(o.json ? `${JSON.stringify(outcome)}\n` : formatOutcome(action, outcome, desk.via));
  const unconfigured = outcome.unconfigured ?? [];
  if (outcome.missing.length === 0 && unconfigured.length === 0) return ExitCode.Ok;
  // The ids it did not find or could not retry are the command's failure: on stderr, as `show` says its own.
  if (!o.json && outcome.missing.length > 0) {
    const missing = outcome.missing.join(", ");
    process.stderr.write(`bothost failed: no dead letter ${missing} (see "bothost failed list")\n`);
  }
  if (!o.json && unconfigured.length > 0) {
    process.stderr.write(
      `bothost failed: not retried: ${unconfigured.join(", ")}: their bot is not in the config, so no ` +
        `bot would run them (drop them, or add the bot back to retry them)\n`,
    );
  }
  return ExitCode.RuntimeFailure;
}

function formatList(letters: DeadLetter[]): string {
  if (letters.length === 0) return "No dead letters.\n";
  // A RETRY column only when some letter waits for its retry (e.g. one requested, then kept at
  // the daemon's shutdown); ERROR is always the letter's own error.
  const retries = letters.some((l) => l.retryRequestedAt);
  const rows = letters.map((l) => [
    l.id,
    l.source,
    String(l.attempts),
    l.lastFailedAt.replace(/\.\d+Z$/, "Z"),
    ...(retries ? [l.retryRequestedAt ? "requested" : "-"] : []),
    oneLine(l.error.message, 60),
  ]);
  const head = ["ID", "SOURCE", "ATTEMPTS", "LAST FAILED", ...(retries ? ["RETRY"] : []), "ERROR"];
  return `${table([head, ...rows]).join("\n")}\n${unconfiguredNote(letters)}`;
}

/** Names the bots of listed letters that are not in the config, and what can be done with them. */
function unconfiguredNote(letters: DeadLetter[]): string {
  const counts = new Map<string, number>();
  for (const l of letters) if (l.unconfigured) counts.set(l.bot, (counts.get(l.bot) ?? 0) + 1);
  return [...counts]
    .map(
      ([bot, n]) =>
        `\nThe ${n} letter${n === 1 ? "" : "s"} of ${bot} belong${n === 1 ? "s" : ""} to a bot no longer in the config: ` +
        `they cannot be retried ("bothost failed drop --all --bot ${bot}" deletes them).\n`,
    )
    .join("");
}

function formatOne(l: DeadLetter): string {
  return [
    `${l.id}  (${l.source}, ${l.attempts} attempts, first failed ${l.firstFailedAt}, last ${l.lastFailedAt})`,
    ...(l.retryRequestedAt ? [`retry requested at ${l.retryRequestedAt}`] : []),
    ...(l.unconfigured
      ? [`bot ${l.bot} is no longer in the config: this letter can be dropped, not retried`]
      : []),
    ...(l.running
      ? [
          "its run still goes on in the daemon: no failure; the letter goes once the run is over " +
            "(kept so that a crash loses nothing: the next start would replay it)",
        ]
      : []),
    "",
    l.error.stack ?? `${l.error.name}: ${l.error.message}`,
    "",
    JSON.stringify(l.event, null, 2),
    "",
  ].join("\n");
}

function formatOutcome(action: "retry" | "drop", outcome: DeadLetterOutcome, via: LetterDesk["via"]): string {
  const lines: string[] = [];
  const refused = outcome.missing.length + (outcome.unconfigured?.length ?? 0);
  if (outcome.done.length === 0 && refused === 0) lines.push("No dead letters.");
  if (outcome.done.length === 0 && refused > 0) return "";
  if (action === "drop" && outcome.done.length > 0) lines.push(`Dropped ${listed(outcome.done)}`);
  if (action === "retry") {
    // Through a daemon, the letters of the bots it runs are replayed now; the others wait for the
    // instance running their bot, as every letter does when the store is changed directly.
    const elsewhere = via === "daemon" ? (outcome.elsewhere ?? []) : outcome.done;
    const here = outcome.done.filter((id) => !elsewhere.includes(id));
    if (here.length > 0) lines.push(`Retry requested for ${listed(here)} (the daemon handles them now)`);
    if (elsewhere.length > 0)
      lines.push(
        `Retry requested for ${listed(elsewhere)} (handled by the daemon running the bot, or at its next start)`,
      );
  }
  return `${lines.join("\n")}\n`;
}

const listed = (ids: readonly string[]) => `${ids.length}: ${ids.join(", ")}`;

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Straight from the state store when it opens, else through the running daemon holding its lock. */
interface LetterDesk extends Pick<DeadLetterOffice, "list" | "get" | "retry" | "drop"> {
  /** Where the letters are: said when a retry waits for the daemon's start. */
  readonly via: "store" | "daemon";
  close(): Promise<void>;
}

/**
 * Through the running daemon when one answers (its admin socket, else http.listen): only state:
 * and http: of the config are needed then. Otherwise straight in the state store, which needs the
 * whole config (each bot's letter bound and secrets), variables not set in this shell aside.
 */
async function openLetterDesk(flag: string | undefined): Promise<LetterDesk> {
  const { daemonClient, loadConfigWithPlaceholders, readAdminView, resolveConfigPath } = await import(
    "./admin-deps.ts"
  );
  const file = resolveConfigPath({ flag });
  const daemon = daemonClient(await readAdminView(file));
  if (await daemon.reachable()) return daemonDesk(daemon);
  // The state store's code is loaded only when no daemon answers.
  const [{ deadLetterOfficeFor }, { openOfflineStore }] = await Promise.all([
    import("../daemon/dead-letter-office-for.ts"),
    import("./offline-store.ts"),
  ]);
  // Variables not set in this shell (bot keys kept in the service's environment) are not needed here.
  const { config } = await loadConfigWithPlaceholders(file);
  let store: StateBackend;
  try {
    store = await openOfflineStore(config, "bothost failed");
  } catch (err) {
    // A daemon holds the directory but answers on no channel: its first call says so. Another
    // command holding it past the wait is said in the lock's own words.
    if (isStateError(err) && err.code === "STATE_LOCKED" && err.heldBy !== "command")
      return daemonDesk(daemon);
    await daemon.close();
    throw err;
  }
  await daemon.close();
  return Object.assign(deadLetterOfficeFor(config, store), {
    via: "store" as const,
    close: () => store.close(),
  });
}

function daemonDesk(daemon: DaemonClient): LetterDesk {
  const one = (id: string) => `/admin/failed/${id.split("/").map(encodeURIComponent).join("/")}`;
  return {
    via: "daemon",
    list: async (bot) =>
      (await daemon.call(
        "GET",
        `/admin/failed${bot ? `?bot=${encodeURIComponent(bot)}` : ""}`,
      )) as DeadLetter[],
    // An id is `<bot>/<n>`: any other shape names no letter (and no route of the daemon's).
    get: async (id) =>
      /^[^/]+\/[^/]+$/.test(id)
        ? ((await daemon.call("GET", one(id), undefined, true)) as DeadLetter | undefined)
        : undefined,
    retry: async (selection) =>
      (await daemon.call("POST", "/admin/failed/retry", selection)) as DeadLetterOutcome,
    drop: async (selection) =>
      (await daemon.call("POST", "/admin/failed/drop", selection)) as DeadLetterOutcome,
    close: () => daemon.close(),
  };
}
