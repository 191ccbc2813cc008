import { ExitCode } from "../config/exit-codes.ts";
import type { ReloadReport } from "../daemon/reload-plan.ts";
import { BothostError, isBothostError } from "../errors/bothost-error.ts";
import { lockHolderHere } from "../state/lock-holder.ts";
import { commandArgs, configOption, reportStartupError } from "./args.ts";
import type { DaemonClient } from "./daemon-client.ts";

/** How long `reload` waits for the daemon's answer. */
const RELOAD_WAIT_MS = 5 * 60_000;

export const reloadHelp = `Usage: bothost reload [--config FILE] [--json]

Makes the running daemon read its config file again, validate it and every changed bot module in
full and set up each new bot version (while the old one still runs), then apply only what changed:
added bots start, removed bots stop (their event queues are deleted), bots whose entry, settings,
key or module changed restart with catch-up; the others keep their queues. A config with errors,
or a bot whose setup throws, is refused (printed with file:line:column, or the bot, its module and
the problem; exit code 2) and the daemon keeps running the old one, every bot as it was. A bot it
started whose settings name a channel or user group the bot cannot see runs all the same: each
such setting is printed located, on a line "Warning: …", and the exit code stays 0. Same as
sending the daemon SIGHUP, except that after a SIGHUP the warnings are in the daemon's log only.
The daemon is asked on its admin socket (in the state directory;
with state.redis, in $TMPDIR/bothost-<uid>/), else
through its HTTP listener (http.listen), else sent SIGHUP (the pid in the state directory's LOCK
file, when a live process of this host that took the lock; none to a daemon in a clean stop, whose
handlers drain: DAEMON_STOPPING, exit 1). It waits up to 5 minutes for the daemon's answer (each new version's setup may take its
bot's handler_timeout); a daemon that does not answer by then is DAEMON_SLOW, exit 1, and one that
closes the connection before answering (it stopped or died meanwhile) DAEMON_CLOSED, exit 1. A daemon that
fails the request (HTTP 5xx), or refuses it (a wrong http.admin_token: DAEMON_REFUSED), has not
refused the config: its error is printed on stderr, exit 1.

Options:
  -c, --config FILE   The config file (default: $BOTHOST_CONFIG, else ./bothost.yaml)
      --json          Print the result as JSON on stdout, a refused config included:
                      { refused: false, add, remove, restart, keep, failed, needRestart }
                      (and warnings: ["file:line:column path: message", …] when there are some),
                      { refused: true, problems: ["file:line:column path: message", …] }, or
                      { refused: null, signal: "SIGHUP", pid } when only a signal was sent
  -h, --help          Show this text
`;

export async function runReloadCommand(argv: string[]): Promise<number> {
  const args = commandArgs("reload", argv, reloadHelp, { ...configOption, json: { type: "boolean" } });
  if (typeof args === "number") return args;
  const { values } = args;
  let daemon: DaemonClient | undefined;
  try {
    const { daemonClient, failedRequest, readAdminView, resolveConfigPath } = await import("./admin-deps.ts");
    // Only state: and http: must be sound here: the daemon reads and checks the whole file itself.
    const view = await readAdminView(resolveConfigPath({ flag: values.config }));
    daemon = daemonClient(view);
    let report: ReloadReport;
    try {
      // A reload sets up every changed bot (each within its handler_timeout) and catches up.
      report = (await daemon.call("POST", "/admin/reload", undefined, false, RELOAD_WAIT_MS)) as ReloadReport;
    } catch (err) {
      // A 5xx: the daemon failed while reloading; the config may be fine, and some of it applied.
      const failed = failedRequest(err);
      if (failed) {
        process.stderr.write(
          `bothost reload: the daemon failed the reload (HTTP ${failed.status}): ${failed.error}. This is no verdict on the new config: the daemon's log says what it applied, and \`bothost status\` what runs now.\n`,
        );
        return ExitCode.RuntimeFailure;
      }
      // A 400 is the daemon's verdict on the config; another refusal (a wrong admin_token's 401,
      // no admin routes) is about the request: said as such below, exit 1, no config blamed.
      const verdict = /^the running daemon refused \(HTTP 400\): /;
      if (isBothostError(err) && err.code === "DAEMON_REFUSED" && verdict.test(err.message)) {
        const problems = err.message.replace(verdict, "");
        if (values.json) {
          // Same object as a success, so a script reads `refused` first either way.
          process.stdout.write(`${JSON.stringify({ refused: true, problems: problems.split("\n") })}\n`);
        } else {
          process.stderr.write(
            `bothost reload: the daemon refused the new config and keeps the old one:\n${problems}\n`,
          );
        }
        return ExitCode.ConfigInvalid;
      }
      if (isBothostError(err) && err.code === "DAEMON_UNREACHABLE" && view.state.path !== undefined) {
        return await signalDaemon(view.state.path, err, values.json === true);
      }
      throw err;
    }
    process.stdout.write(
      values.json ? `${JSON.stringify({ refused: false, ...report })}\n` : formatReport(report),
    );
    return report.failed.length > 0 ? ExitCode.RuntimeFailure : ExitCode.Ok;
  } catch (err) {
    return reportStartupError(err, "reload");
  } finally {
    await daemon?.close();
  }
}

/**
 * No admin channel answers: SIGHUP to the daemon holding the state directory's lock, when that is
 * a live process of this host that took it (not a pid on another host, or one reused since).
 */
async function signalDaemon(statePath: string, unreachable: BothostError, json: boolean): Promise<number> {
  const holder = await lockHolderHere(statePath);
  if ("none" in holder) {
    throw new BothostError(unreachable.code, `${unreachable.message} No SIGHUP sent: ${holder.none}.`);
  }
  const { pid } = holder;
  try {
    process.kill(pid, "SIGHUP");
  } catch {
    throw unreachable;
  }
  process.stdout.write(
    json
      ? `${JSON.stringify({ refused: null, signal: "SIGHUP", pid })}\n`
      : `Sent SIGHUP to the daemon (pid ${pid}); its log says what changed.\n`,
  );
  return ExitCode.Ok;
}

export function formatReport(r: ReloadReport): string {
  const lines: string[] = [];
  const part = (label: string, names: string[]) =>
    names.length > 0 && lines.push(`${label}: ${names.join(", ")}`);
  const here = (names: string[]) => names.filter((name) => !r.notHere?.includes(name));
  part("Started", here(r.add));
  part("Stopped", r.remove);
  part("Restarted", here(r.restart));
  // Another instance runs these: reloading it too is what changes them there.
  const nowhere = r.runsNowhere ?? [];
  part(
    "Loaded, not running on this instance (the instance running it keeps its version until reloaded too: SIGHUP that process, or bothost reload where its admin socket is)",
    (r.notHere ?? [])
      .filter((name) => !nowhere.includes(name))
      .map((name) => (r.runsOn?.[name] ? `${name} (on instance ${r.runsOn[name]})` : name)),
  );
  part("Loaded, run by no instance known now (the next instance to find its lease free starts it)", nowhere);
  if (lines.length === 0) lines.push("Nothing changed.");
  if (r.keep.length > 0) lines.push(`Unchanged: ${r.keep.length} bot${r.keep.length === 1 ? "" : "s"}`);
  for (const f of r.failed) lines.push(`Failed to start ${f.name}: ${f.error}`);
  for (const w of r.warnings ?? []) lines.push(`Warning: ${w}`);
  if (r.needRestart.length > 0) {
    lines.push(`Applied at the next restart only: ${r.needRestart.join(", ")}`);
  }
  return `${lines.join("\n")}\n`;
}
