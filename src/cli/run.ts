import { AUTH_REJECTED, AUTH_REJECTED_AT_STOP } from "../api/errors.ts";
import { ExitCode } from "../config/exit-codes.ts";
import type { Booted } from "../daemon/boot.ts";
import { commandArgs, configOption, reloadInBackground, reportStartupError } from "./args.ts";
import { logStrayErrors } from "./stray-errors.ts";

export const runHelp = `Usage: bothost run [--config FILE]

Starts every bot in the config and runs until SIGINT or SIGTERM, then stops polling, lets
handlers finish (up to shutdown_timeout), deletes the event queues and flushes the state.
SIGHUP (or "bothost reload") reads the config again: added bots start, removed bots stop,
changed bots restart; a config with errors is refused and the old one keeps running.

Options:
  -c, --config FILE   The config file (default: $BOTHOST_CONFIG, else ./bothost.yaml)
  -h, --help          Show this text
`;

export async function runCommand(argv: string[]): Promise<number> {
  const args = commandArgs("run", argv, runHelp, configOption);
  if (typeof args === "number") return args;
  const { values } = args;
  let booted: Booted | undefined;
  // The handlers are in place before the boot (bothost's own modules, the config, the bots'
  // modules, the state store): a SIGHUP then (a reload asked while the daemon loads) would
  // otherwise end the process. So the daemon's modules are imported only once they are. A signal
  // that comes before the daemon runs is acted on once it does.
  let shutdown: NodeJS.Signals | undefined;
  let reloadAsked = false;
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const onSignal = (signal: NodeJS.Signals) => {
    if (shutdown) {
      booted?.log.warn({ signal }, "second signal: exiting without waiting");
      process.exit(ExitCode.RuntimeFailure);
    }
    shutdown = signal;
    booted?.log.info({ signal }, "shutting down");
    stop();
  };
  const onReload = () => {
    if (!booted) {
      reloadAsked = true;
      return;
    }
    booted.log.info({ signal: "SIGHUP" }, "reloading the config");
    reloadInBackground(booted.daemon, booted.log);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onReload);
  try {
    const [{ resolveConfigPath }, { bootDaemon }] = await Promise.all([
      import("../config/load-config.ts"),
      import("../daemon/boot.ts"),
    ]);
    booted = await bootDaemon(resolveConfigPath({ flag: values.config }));
    const { daemon, log } = booted;
    logStrayErrors(log);
    if (shutdown) log.info({ signal: shutdown }, "shutting down");
    // A signal during start stops at once: a bot still in its `setup` does not hold the shutdown.
    const report = await Promise.race([daemon.start(), stopped.then(() => undefined)]);
    if (!report) {
      await booted.stop();
      return ExitCode.Ok;
    }
    // In a cluster an instance whose bots all run elsewhere still waits, as their spare, until a
    // later round finds that every bot failed to start here too.
    const authOnly = report.authFailed.length > 0 && report.failed.length === 0;
    let nothing =
      report.started.length === 0 && report.standby.length === 0 ? (authOnly ? "auth" : "failed") : undefined;
    if (!nothing) {
      if (reloadAsked) onReload();
      nothing = await Promise.race([stopped.then(() => undefined), daemon.runsNothing]);
      if (nothing)
        log.error("every bot failed to start on this instance: it can run none of them, so the daemon stops");
    }
    if (nothing) {
      // The log (stdout) has each failure in full; stderr says in a few lines why nothing runs.
      const { bots } = await daemon.status();
      // The daemon stops: a refused key's advice to reload would have nothing to reload.
      const reason = (r: string | undefined) => (r === AUTH_REJECTED ? AUTH_REJECTED_AT_STOP : r);
      const why = bots.map((b) => `  ${b.name}: ${reason(b.reason) ?? b.state}`).join("\n");
      process.stderr.write(`bothost: no bot could start, so the daemon stops:\n${why}\n`);
      await booted.stop();
      if (nothing === "auth") return ExitCode.AuthFailed;
      // As `check` says it: every start refused a declaration of its bot's setup (code to fix),
      // at this instance's start or, in a cluster, at a later round's.
      const { isRefusedDeclaration } = await import("../daemon/trial-setup.ts");
      const refused = report.failed.length > 0 && report.failed.every((f) => isRefusedDeclaration(f.error));
      const code = nothing === "refused" || (refused && report.authFailed.length === 0);
      return code ? ExitCode.ConfigInvalid : ExitCode.RuntimeFailure;
    }
    await booted.stop();
    return ExitCode.Ok;
  } catch (err) {
    await booted?.stop().catch(() => {});
    return reportStartupError(err);
  } finally {
    // Stopped, the store flushed and closed: a handler deaf to its signal past shutdown_timeout
    // (abandoned by the stop, nothing of it can be kept) does not keep the process alive.
    if (booted !== undefined) setTimeout(() => process.exit(), 0).unref();
  }
}
