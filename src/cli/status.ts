import { ExitCode } from "../config/exit-codes.ts";
import { loadConfig, resolveConfigPath } from "../config/load-config.ts";
import type { BotStatus, BudgetStatus, DaemonStatus } from "../http/daemon-status.ts";
import { duration } from "../http/status-page.ts";
import { commandArgs, configOption, reportStartupError, table } from "./args.ts";
import { daemonClient } from "./daemon-client.ts";

export const statusHelp = `Usage: bothost status [--config FILE] [--json]

Asks the running daemon (through its HTTP listener, http.listen) what each bot is doing: its
state and why, its event queue and its age, its last event, events handled, failed handler runs,
dead letters and next scheduled runs; and the daemon's version and uptime. Exits 1 when the
daemon does not answer or a bot has failed.

Options:
  -c, --config FILE   The config file (default: $BOTHOST_CONFIG, else ./bothost.yaml)
      --json          Print the status as JSON
  -h, --help          Show this text
`;

export async function runStatusCommand(argv: string[]): Promise<number> {
  const args = commandArgs("status", argv, statusHelp, { ...configOption, json: { type: "boolean" } });
  if (typeof args === "number") return args;
  const { values } = args;
  try {
    const path = resolveConfigPath({ flag: values.config });
    const daemon = daemonClient(await loadConfig(path), "bothost status");
    const status = (await daemon.call("GET", "/admin/status")) as DaemonStatus;
    process.stdout.write(values.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
    return status.bots.some((b) => b.state === "failed") ? ExitCode.RuntimeFailure : ExitCode.Ok;
  } catch (err) {
    return reportStartupError(err);
  }
}

/** "echo: calls this hour: event queue 412/2000, other 35/2000; polls spaced 2.0 s" */
function budgetLine(name: string, b: BudgetStatus): string {
  const bucket = (label: string, x: BudgetStatus["events"]) =>
    `${label} ${x.usedHour}/${x.perHour}${x.rateLimited > 0 ? ` (${x.rateLimited}× 429)` : ""}`;
  const spacing =
    b.pollSpacingSeconds > 0 ? `polls spaced ${b.pollSpacingSeconds.toFixed(1)} s` : "polls at once";
  return `${name}: calls this hour: ${bucket("event queue", b.events)}, ${bucket("other", b.other)}; ${spacing}`;
}

const busy = (b: BudgetStatus): boolean =>
  b.pollSpacingSeconds > 0 ||
  [b.events, b.other].some((x) => x.rateLimited > 0 || x.usedHour * 10 >= x.perHour);

export function formatStatus(s: DaemonStatus): string {
  const lines = [
    `bothost ${s.version}, pid ${s.pid}, up ${duration(s.uptimeSeconds)}, ${s.bots.length} bot${s.bots.length === 1 ? "" : "s"}`,
    "",
  ];
  const head = ["BOT", "STATE", "QUEUE AGE", "LAST EVENT", "HANDLED", "FAILED", "DEAD", "NEXT RUN"];
  const rows = s.bots.map((b) => [
    b.name,
    b.state,
    b.queueAgeSeconds === undefined ? "-" : duration(b.queueAgeSeconds),
    b.lastEventAt?.replace(/\.\d+Z$/, "Z") ?? "-",
    String(b.handled),
    String(b.failed),
    String(b.deadLetters),
    b.nextRuns[0] ? `${b.nextRuns[0].name} ${b.nextRuns[0].at.replace(/\.\d+Z$/, "Z")}` : "-",
  ]);
  lines.push(...table([head, ...rows]));
  const troubled = s.bots.filter((b): b is BotStatus & { reason: string } => b.reason !== undefined);
  if (troubled.length > 0) lines.push("", ...troubled.map((b) => `${b.name}: ${b.reason}`));
  for (const b of s.bots) {
    if (!b.dryRun) continue;
    lines.push(
      "",
      `${b.name}: dry run, ${b.dryRun.captured} write(s) captured, not made${b.dryRun.recent.length ? "; latest:" : ""}`,
    );
    lines.push(...b.dryRun.recent.slice(-5).map((c) => `  ${c.at.replace(/\.\d+Z$/, "Z")}  ${c.does}`));
  }
  // Every bot's budget line in a small daemon; in a large one, only the bots that spend much.
  const budgets = s.bots.flatMap((b) =>
    b.budget && (s.bots.length <= 10 || busy(b.budget)) ? [budgetLine(b.name, b.budget)] : [],
  );
  if (budgets.length > 0) lines.push("", ...budgets);
  if (s.recentFailures.length > 0) {
    lines.push("", `${s.recentFailures.length} recent dead letter(s); see "bothost failed list".`);
  }
  return `${lines.join("\n")}\n`;
}
