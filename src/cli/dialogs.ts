/**
 * `bothost dialogs`: the running daemon's open dialogs (`ctx.prompt`), and ending one from the
 * command line, through the daemon's admin socket (else its HTTP listener) like `bothost status`.
 */
import { ExitCode, exitCodeFor } from "../config/exit-codes.ts";
import { dialogIdProblem } from "../daemon/dialog-ids.ts";
import { isBothostError } from "../errors/bothost-error.ts";
import { type BotDialogs, noHolderWhy, type PendingNote } from "../http/daemon-status.ts";
import type { DialogView } from "../pipeline/dialogs/dialogs.ts";
import { isStateError } from "../state/state-error.ts";
import { commandArgs, configOption, reportStartupError, table, unknownWord, usageError } from "./args.ts";
import type { DaemonClient } from "./daemon-client.ts";

export const dialogsHelp = `Usage: bothost dialogs [list|end] [options]

  bothost dialogs [list] [--bot NAME] [--json]    The open dialogs, oldest first
  bothost dialogs end BOT ID [--note TEXT]        End one: its person is told the note

A dialog is a handler waiting at ctx.prompt for a person's answer. The list shows each one's id,
person, where (a direct message, or a channel and topic), the prompt it is at (from 1), since when
and its deadline ("(ending)" while its end is still being written, as through a state store
outage; "(being handled)" while its answer runs; with no daemon running, or the bot stopped,
"(answer or deadline recorded: runs at the next start)"); "(outside narrow [channel, general])" when the bot's narrow keeps its answers out (they
cannot arrive: end it, or widen the narrow and reload). Ending a dialog deletes it: its
handler does not run again, its person is told "An operator ended this conversation." (or
--note), and their next message there is an ordinary message. The running daemon is asked on
its admin socket (in the state directory; with state.redis, in $TMPDIR/bothost-<uid>/), else
through its HTTP listener (http.listen). With no
daemon answering, the list is read from the state store (the config's state:), and says so on
stderr. The list also names the ended dialogs whose end note (--note, or that the bot's code
changed) is not said yet: told at the bot's next start, or being said by the running bot now.
Ending needs the running daemon. Exits 1 when end finds no daemon, or for an unknown
dialog; 2 for a usage error or a bot the config does not have; 75 when the dialog's first question is still being sent or recorded after 5 s
(nothing was ended: run it again once the list shows the dialog's deadline).

Options:
  -c, --config FILE   The config file (default: $BOTHOST_CONFIG, else ./bothost.yaml)
      --bot NAME      Only this bot's dialogs
      --note TEXT     end: what the person is told
      --json          list: print [{ bot, dialogs: [{ id, userId, userName, where, step,
                      since, deadline, awaiting?, ending?, outsideNarrow?,
                      nextStart? }], notes?: [{ id, userId, userName,
                      where, ended, endedAt, sending?, saying? }] }];
                      end: { ended, bot, id }
  -h, --help          Show this text
`;

const usage = (message: string) => usageError("dialogs", message);

export async function runDialogsCommand(argv: string[]): Promise<number> {
  const args = commandArgs(
    "dialogs",
    argv,
    dialogsHelp,
    { ...configOption, bot: { type: "string" }, note: { type: "string" }, json: { type: "boolean" } },
    true,
  );
  if (typeof args === "number") return args;
  const { values, positionals } = args;
  const [action = "list", ...rest] = positionals;
  if (action !== "list" && action !== "end") return usage(unknownWord("action", action, ["list", "end"]));
  if (action === "list" && rest.length > 0) return usage(`list takes no arguments (got ${rest[0]})`);
  if (action === "list" && values.note !== undefined) return usage("--note goes with end");
  if (action === "end" && rest.length !== 2)
    return usage("end takes a bot and a dialog id, like: end survey 1234");
  if (action === "end" && values.bot !== undefined)
    return usage("end names its bot: end BOT ID, without --bot");
  const malformed = action === "end" ? dialogIdProblem(rest[1]!) : undefined;
  if (malformed !== undefined) return usage(malformed);
  if (values.note?.trim() === "")
    return usage("--note is empty: give the text the person is told, or leave --note out for the default");
  let daemon: DaemonClient | undefined;
  try {
    const { daemonClient, readAdminView, resolveConfigPath } = await import("./admin-deps.ts");
    const file = resolveConfigPath({ flag: values.config });
    daemon = daemonClient(await readAdminView(file));
    if (action === "list") {
      const query = values.bot ? `?bot=${encodeURIComponent(values.bot)}` : "";
      const all =
        (!(await daemon.reachable()) && (await fromStore(file, values.bot))) ||
        ((await daemon.call("GET", `/admin/dialogs${query}`)) as BotDialogs[]);
      process.stdout.write(values.json ? `${JSON.stringify(all, null, 2)}\n` : formatList(all));
      return ExitCode.Ok;
    }
    const [bot, id] = rest as [string, string];
    const path = `/admin/dialogs/${encodeURIComponent(bot)}/${encodeURIComponent(id)}/end`;
    const ended = await daemon.call("POST", path, values.note === undefined ? {} : { note: values.note });
    const { underWay, nextStart } = ended as { underWay?: true; nextStart?: true };
    const told = nextStart
      ? "the bot is stopped here: the end is recorded, and its person is told when the bot next starts (here, or on the instance that takes it)"
      : underWay
        ? "a run of it was under way: it asks no more questions, and its person is told once it is over"
        : "its person is told";
    process.stdout.write(
      values.json ? `${JSON.stringify(ended)}\n` : `Ended dialog ${id} of ${bot}; ${told}.\n`,
    );
    return ExitCode.Ok;
  } catch (err) {
    // The daemon's refusal (an unknown bot or dialog, a bad note) in its own words.
    if (isBothostError(err) && err.code === "DAEMON_REFUSED") {
      process.stderr.write(
        `bothost dialogs: ${err.message.replace(/^the running daemon (refused|failed the request) \(HTTP \d+\): /, "")}\n`,
      );
      // Its first question not recorded yet: nothing was ended, and the same end may pass soon.
      const starting = isBothostError(err.cause) && err.cause.code === "DIALOG_STARTING";
      return starting ? ExitCode.TryAgain : exitCodeFor(err);
    }
    return reportStartupError(err, "dialogs");
  } finally {
    await daemon?.close();
  }
}

/**
 * The dialogs as the state store keeps them, no daemon answering (said on stderr); undefined when
 * a daemon holds the store but answers on no channel (its call then says so).
 */
async function fromStore(file: string, bot: string | undefined): Promise<BotDialogs[] | undefined> {
  const [{ loadConfigWithPlaceholders }, { openOfflineStore }, { storedDialogs }] = await Promise.all([
    import("./admin-deps.ts"),
    import("./offline-store.ts"),
    import("../daemon/stored-dialogs.ts"),
  ]);
  // Variables not set in this shell (bot keys kept in the service's environment) are not needed here.
  const { config } = await loadConfigWithPlaceholders(file);
  // Another command holding the store past the wait is said as it is, not as a silent daemon.
  const store = await openOfflineStore(config, "bothost dialogs").catch((err: unknown) => {
    if (isStateError(err) && err.code === "STATE_LOCKED" && err.heldBy !== "command") return undefined;
    throw err;
  });
  if (store === undefined) return undefined;
  try {
    const all = await storedDialogs(config, store, bot);
    process.stderr.write("No daemon answers: the open dialogs as the state store keeps them.\n");
    return all;
  } finally {
    await store.close();
  }
}

function formatList(all: BotDialogs[]): string {
  const lines: string[] = [];
  for (const listing of all) {
    const { bot, dialogs, elsewhere, leaseHolder, notes, stopped, notStarted } = listing;
    if (elsewhere && leaseHolder !== undefined)
      lines.push(
        `${bot}: runs on instance ${leaseHolder} (its dialogs are listed there: bothost dialogs where that instance's admin socket is, or GET /admin/dialogs on its http.listen)`,
        "",
      );
    else if (elsewhere) lines.push(`${bot}: runs on no instance known now (${noHolderWhy(listing)})`, "");
    if (dialogs.length > 0) {
      const here = stopped
        ? " as last known here, where the bot is stopped (see bothost status): answers wait until it runs again"
        : notStarted
          ? " as the state store keeps them: the bot has not started here yet (see bothost status), and they are ended here once it runs"
          : "";
      lines.push(`${bot}: ${dialogs.length} open dialog${dialogs.length === 1 ? "" : "s"}${here}`);
      lines.push(...dialogTable(dialogs).map((line) => `  ${line}`), "");
    }
    if (notes !== undefined && notes.length > 0) lines.push(...noteLines(bot, notes), "");
  }
  return lines.length === 0 ? "No open dialogs.\n" : lines.join("\n");
}

const ENDED_BY: Record<string, string> = { operator: "by an operator", changed: "its code changed" };

/**
 * A bot's end notes not said yet: how many and when they are said (at the bot's next start, unless
 * the running bot is saying one now), then a table: the ended dialog's id, its person, where they
 * are told, the end.
 */
export function noteLines(bot: string, notes: readonly PendingNote[]): string[] {
  const n = notes.length;
  const when = notes.some((x) => x.saying) ? "not said yet" : "to be said at the bot's next start";
  const rows = table([
    ["ID", "WHO", "WHERE", "ENDED"],
    ...notes.map((x) => [
      x.id,
      x.userName,
      x.where,
      `${x.endedAt.replace(/\.\d+Z$/, "Z")} ${ENDED_BY[x.ended] ?? x.ended}${markOf(x)}`,
    ]),
  ]);
  return [
    `${bot}: ${n} ended dialog${n === 1 ? "'s end note" : "s' end notes"} ${when}`,
    ...rows.map((l) => `  ${l}`),
  ];
}

const markOf = (n: PendingNote): string =>
  n.saying
    ? " (being said now: a send that fails leaves it to the bot's next start)"
    : n.sending
      ? " (its send was under way: looked for before it is said)"
      : "";

/** The dialogs as a table: id, person, where, step, since, deadline. */
export function dialogTable(dialogs: readonly DialogView[]): string[] {
  const time = (iso: string) => iso.replace(/\.\d+Z$/, "Z");
  return table([
    ["ID", "WHO", "WHERE", "STEP", "SINCE", "DEADLINE"],
    ...dialogs.map((d) => [
      d.id,
      d.awaiting ? `${d.userName}; awaits ${d.awaiting}` : d.userName,
      d.outsideNarrow ? `${d.where} (outside narrow ${d.outsideNarrow})` : d.where,
      String(d.step),
      time(d.since),
      d.ending
        ? "(ending)"
        : d.deadline
          ? time(d.deadline)
          : d.nextStart
            ? "(answer or deadline recorded: runs at the next start)"
            : "(being handled)",
    ]),
  ]);
}
