import type { ConfigProblemsOnDisk } from "../config/admin-view.ts";
import { formatProblems } from "../config/config-problem.ts";
import { ExitCode } from "../config/exit-codes.ts";
import {
  type BotStatus,
  type BucketStatus,
  type BudgetStatus,
  type DaemonStatus,
  redisLine,
  storeLine,
  webhookCounts,
} from "../http/daemon-status.ts";
import { duration } from "../http/status-page.ts";
import { commandArgs, configOption, reportStartupError, table } from "./args.ts";
import type { DaemonClient } from "./daemon-client.ts";
import { dialogTable, noteLines } from "./dialogs.ts";

export const statusHelp = `Usage: bothost status [--config FILE] [--json]

Asks the running daemon what each bot is doing: its state and why, its event queue and its age,
its last event, events handled and failed (each once, by how its handling ended: FAILED counts
those failed for good, every attempt or NoRetry), dead letters and next scheduled runs; and
the daemon's version and uptime. The daemon is asked on its admin socket (in the state
directory; with state.redis, in $TMPDIR/bothost-<uid>/), else through its HTTP listener
(http.listen). Only state: and http: of the config
are needed: when the rest of the file has problems (or a variable it uses is not set in this
shell), the status is shown and the problems are listed below it. Exits 1 when the daemon does
not answer, a bot has failed, or (in a cluster) a bot stopped because its lease was lost.

Options:
  -c, --config FILE   The config file (default: $BOTHOST_CONFIG, else ./bothost.yaml)
      --json          Print the status as JSON, with configProblems and unsetVariables
  -h, --help          Show this text
`;

export async function runStatusCommand(argv: string[]): Promise<number> {
  const args = commandArgs("status", argv, statusHelp, { ...configOption, json: { type: "boolean" } });
  if (typeof args === "number") return args;
  const { values } = args;
  let daemon: DaemonClient | undefined;
  try {
    const { configProblemsOnDisk, daemonClient, readAdminView, resolveConfigPath } = await import(
      "./admin-deps.ts"
    );
    const { missingModulesOnDisk } = await import("./missing-modules.ts");
    const path = resolveConfigPath({ flag: values.config });
    daemon = daemonClient(await readAdminView(path));
    const onDisk = await configProblemsOnDisk(path);
    // A file that loads can still be refused by a reload: a module path that leads nowhere.
    if (onDisk.problems.length === 0) onDisk.problems.push(...(await missingModulesOnDisk(path)));
    const status = (await daemon.call("GET", "/admin/status").catch((err: unknown) => {
      if (onDisk.problems.length > 0)
        process.stderr.write(`The config on disk has problems:\n${formatProblems(onDisk.problems)}\n`);
      throw err;
    })) as DaemonStatus;
    process.stdout.write(
      values.json
        ? `${JSON.stringify({ ...status, configProblems: onDisk.problems, unsetVariables: onDisk.unsetVariables }, null, 2)}\n`
        : formatStatus(status) + formatOnDisk(status, onDisk),
    );
    // A bot stopped by a lost lease runs nowhere known: not "no bot has failed".
    const down = status.bots.some((b) => b.state === "failed" || (b.state === "stopped" && b.leaseLost));
    return down ? ExitCode.RuntimeFailure : ExitCode.Ok;
  } catch (err) {
    return reportStartupError(err, "status");
  } finally {
    await daemon?.close();
  }
}

/** The config file's problems, below the status: the daemon runs what it loaded before. */
export function formatOnDisk(s: DaemonStatus, onDisk: ConfigProblemsOnDisk): string {
  const lines: string[] = [];
  if (onDisk.problems.length > 0) {
    const at = (s.configLoadedAt ?? s.startedAt).replace(/\.\d+Z$/, "Z");
    lines.push(
      "",
      `The running daemon still uses the config it loaded at ${at}; the config on disk has problems:`,
      formatProblems(onDisk.problems),
    );
  }
  if (onDisk.unsetVariables.length > 0) {
    lines.push(
      "",
      `Not set in this shell, so not checked (the daemon reads its own environment): ${onDisk.unsetVariables.join(", ")}`,
    );
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/**
 * "echo: calls used this hour: event queue 412/2000 (1588 left), other 35/2000 (1965 left); polls
 * spaced 2.0 s". Used is the limit less `remainingHour`: the account's calls as the server counts
 * them when it reported them, which includes calls made before this daemon's client existed (a
 * reload or restart makes a new one), so the line agrees with `status --json`.
 */
function budgetLine(name: string, b: BudgetStatus): string {
  const bucket = (label: string, x: BucketStatus) =>
    `${label} ${usedOf(x)}/${x.perHour} (${x.remainingHour} left)${x.rateLimited > 0 ? ` (${x.rateLimited}× 429)` : ""}${x.waitUntil && x !== b.events ? `, held until ${x.waitUntil}` : ""}`;
  const spacing = b.events.waitUntil
    ? `polls wait until ${b.events.waitUntil} (429)`
    : b.pollSpacingSeconds > 0
      ? `polls spaced ${b.pollSpacingSeconds.toFixed(1)} s`
      : "polls at once";
  return `${name}: calls used this hour: ${bucket("event queue", b.events)}, ${bucket("other", b.other)}; ${spacing}`;
}

const usedOf = (x: BucketStatus): number => Math.max(x.usedHour, x.perHour - x.remainingHour);

const busy = (b: BudgetStatus): boolean =>
  b.pollSpacingSeconds > 0 ||
  [b.events, b.other].some(
    (x) => x.waitUntil !== undefined || x.rateLimited > 0 || usedOf(x) * 10 >= x.perHour,
  );

/** The most dialogs per bot `bothost status` prints (`bothost dialogs` prints them all). */
const TEXT_DIALOGS = 10;

/** "survey: 2 open dialogs", then the oldest as a table. */
function dialogLines(bot: string, d: BotStatus["dialogs"]): string[] {
  const shown = d.list.slice(0, TEXT_DIALOGS);
  const more = d.waiting - shown.length;
  return [
    `${bot}: ${d.waiting} open dialog${d.waiting === 1 ? "" : "s"}${more > 0 ? ` (the oldest ${shown.length}; "bothost dialogs --bot ${bot}" lists all)` : ""}:`,
    ...dialogTable(shown).map((line) => `  ${line}`),
  ];
}

export function formatStatus(s: DaemonStatus): string {
  const lines = [
    `bothost ${s.version}, pid ${s.pid}, up ${duration(s.uptimeSeconds)}, ${s.bots.length} bot${s.bots.length === 1 ? "" : "s"}`,
    ...(s.redis ? [redisLine(s.redis)] : []),
    "",
  ];
  const head = [
    "BOT",
    "STATE",
    "QUEUE AGE",
    "LAST EVENT",
    "HANDLED",
    "FAILED",
    "DEAD",
    "DIALOGS",
    "NEXT RUN",
  ];
  const rows = s.bots.map((b) => [
    b.name,
    b.state,
    b.queueAgeSeconds === undefined ? "-" : duration(b.queueAgeSeconds),
    b.lastEventAt?.replace(/\.\d+Z$/, "Z") ?? "-",
    String(b.handled),
    String(b.failed),
    String(b.deadLetters),
    String(b.dialogs?.waiting ?? 0),
    b.nextRuns[0] ? `${b.nextRuns[0].name} ${b.nextRuns[0].at.replace(/\.\d+Z$/, "Z")}` : "-",
  ]);
  lines.push(...table([head, ...rows]));
  const troubled = s.bots.filter((b): b is BotStatus & { reason: string } => b.reason !== undefined);
  if (troubled.length > 0) lines.push("", ...troubled.map((b) => `${b.name}: ${b.reason}`));
  const failing = s.bots.flatMap((b) => (b.store ? [`${b.name}: ${storeLine(b.store)}`] : []));
  if (failing.length > 0) lines.push("", ...failing);
  for (const b of s.bots) {
    if (!b.dryRun) continue;
    lines.push(
      "",
      `${b.name}: dry run, ${b.dryRun.captured} write(s) captured, not made${b.dryRun.recent.length ? "; latest:" : ""}`,
    );
    lines.push(...b.dryRun.recent.map((c) => `  ${c.at.replace(/\.\d+Z$/, "Z")}  ${c.does}`));
  }
  const hooks = s.bots.flatMap((b) =>
    Object.entries(b.webhooks ?? {}).map(([n, w]) => `${b.name}: webhook ${n}: ${webhookCounts(w)}`),
  );
  if (hooks.length > 0) lines.push("", ...hooks);
  for (const b of s.bots) {
    if (b.dialogs?.waiting) lines.push("", ...dialogLines(b.name, b.dialogs));
    if (b.dialogs?.notes?.length) lines.push("", ...noteLines(b.name, b.dialogs.notes));
  }
  // Every bot's budget line in a small daemon; in a large one, only the bots that spend much. None
  // for a bot on standby: the instance running it makes and counts the account's calls.
  const budgets = s.bots.flatMap((b) =>
    b.budget && b.state !== "standby" && (s.bots.length <= 10 || busy(b.budget))
      ? [budgetLine(b.name, b.budget)]
      : [],
  );
  if (budgets.length > 0) lines.push("", ...budgets);
  if (s.recentFailures.length > 0) {
    lines.push("", `${s.recentFailures.length} recent dead letter(s); see "bothost failed list".`);
  }
  const gone = Object.entries(s.unconfiguredDeadLetters ?? {}).map(([bot, n]) => `${bot} (${n})`);
  if (gone.length > 0) {
    lines.push(
      "",
      `Dead letters of bots no longer in the config: ${gone.join(", ")}; see "bothost failed list".`,
    );
  }
  if (s.deadLettersUnread) lines.push("", `Dead letters not shown: ${s.deadLettersUnread}.`);
  return `${lines.join("\n")}\n`;
}
