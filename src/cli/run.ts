/**
 * `bothost run`: load the config and every bot module, start the daemon (and the embedded
 * sandbox when the config says `url: sandbox`), and run until SIGINT or SIGTERM.
 */
import { parseArgs } from "node:util";
import { loadBots } from "../bot/load-bots.ts";
import { resolveConfigPath } from "../config/config-path.ts";
import { ExitCode } from "../config/exit-codes.ts";
import { loadConfigWithSource } from "../config/load-config.ts";
import { Daemon } from "../daemon/daemon.ts";
import { createLogger } from "../log/create-logger.ts";
import { startSandbox } from "../sandbox/start-sandbox.ts";
import type { Sandbox } from "../sandbox/types.ts";
import { FileStore } from "../state/file-store.ts";
import { reportStartupError } from "./report-error.ts";

export const runHelp = `Usage: bothost run [--config FILE]

Starts every bot in the config and runs until SIGINT or SIGTERM, then stops polling, lets
handlers finish (up to shutdown_timeout), deletes the event queues and flushes the state.

Options:
  -c, --config FILE   The config file (default: $BOTHOST_CONFIG, else ./bothost.yaml)
  -h, --help          Show this text
`;

export async function runCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { config: { type: "string", short: "c" }, help: { type: "boolean", short: "h" } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(runHelp);
    return ExitCode.Ok;
  }
  let sandbox: Sandbox | undefined;
  try {
    const { path } = resolveConfigPath({ flag: values.config, env: process.env });
    const { config, source } = await loadConfigWithSource(path);
    const loaded = await loadBots(config, source);
    const log = createLogger({ level: config.log.level, pretty: config.log.pretty });
    if (Object.values(config.bots).some((b) => b.server.url === "sandbox")) {
      const s = config.server?.sandbox;
      sandbox = await startSandbox({ ...(s?.org ? { org: s.org } : {}), port: s?.port ?? 0 });
      log.info({ url: sandbox.url }, "embedded sandbox started");
    }
    const store = await FileStore.open(config.state.path);
    const daemon = new Daemon({
      config,
      bots: loaded.map((b) => ({ name: b.name, definition: b.definition as never, settings: b.settings })),
      store,
      log,
      ...(sandbox
        ? { sandbox: { url: sandbox.url, apiKeyOf: (email) => sandbox!.control.apiKeyOf(email) } }
        : {}),
    });
    const stopped = new Promise<void>((resolve) => {
      let signals = 0;
      const onSignal = (signal: NodeJS.Signals) => {
        signals++;
        if (signals > 1) {
          log.warn({ signal }, "second signal: exiting without waiting");
          process.exit(ExitCode.RuntimeFailure);
        }
        log.info({ signal }, "shutting down");
        resolve();
      };
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
    });
    const report = await daemon.start();
    if (report.started.length === 0) {
      await daemon.stop();
      await sandbox?.stop();
      return report.authFailed.length > 0 && report.failed.length === 0
        ? ExitCode.AuthFailed
        : ExitCode.RuntimeFailure;
    }
    await stopped;
    await daemon.stop();
    await sandbox?.stop();
    return ExitCode.Ok;
  } catch (err) {
    await sandbox?.stop().catch(() => {});
    return reportStartupError(err);
  }
}
