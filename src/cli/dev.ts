import type { Logger } from "pino";
import { ModuleError } from "../bot/module-error.ts";
import { isConfigError } from "../config/config-error.ts";
import { ExitCode } from "../config/exit-codes.ts";
import { loadConfigWithSource, resolveConfigPath } from "../config/load-config.ts";
import type { Config } from "../config/schema.ts";
import { type Booted, bootDaemon } from "../daemon/boot.ts";
import { commandArgs, configOption, reloadProblems, reportStartupError, untilStopped } from "./args.ts";
import { devSources, nextEdit, orgFiles, SourceWatch } from "./dev-watch.ts";
import { logStrayErrors } from "./stray-errors.ts";

export const devHelp = `Usage: bothost dev [--config FILE]

Runs the config's bots on the embedded sandbox (server.url: sandbox) and serves a chat page
from it: pick a person, post in a channel or to a bot, and watch the bots answer. The page's
address is printed last, once the bots run. When the config file, a bot's file or a local file
it imports changes, the config is read again and the changed bots restart; an edit that does
not load is reported, the bot keeps running as it was, and the next save is tried again; one
that does not load at start is reported too, and dev starts at the save that fixes it. Logs
are readable lines (set log.pretty: false for JSON lines). Ctrl-C stops.

Options:
  -c, --config FILE   The config file (default: $BOTHOST_CONFIG, else ./bothost.yaml)
  -h, --help          Show this text
`;

/** How long file events settle before a reload (an editor's save is several events). */
const SETTLE_MS = 250;

export async function runDevCommand(argv: string[]): Promise<number> {
  const args = commandArgs("dev", argv, devHelp, configOption);
  if (typeof args === "number") return args;
  const { values } = args;
  let booted: Booted | undefined;
  let sources: SourceWatch | undefined;
  try {
    const configPath = resolveConfigPath({ flag: values.config });
    const boot = await bootWhenLoads(configPath);
    if (typeof boot === "number") return boot;
    booted = boot;
    const { daemon, log } = booted;
    logStrayErrors(log);
    const sandbox = booted.sandbox!;
    const report = await daemon.start();
    // A bot whose setup failed is fixed by an edit, which reloads it: dev waits for it. Without any
    // such bot (keys refused), no save can help.
    if (report.started.length === 0 && report.failed.length === 0) {
      await booted.stop();
      return ExitCode.RuntimeFailure;
    }
    const chatLine = chatPageLine(`${sandbox.url}/chat/`, process.stdout.isTTY === true);
    // The sandbox reads its org file once, at start: an edit is said once, not reloaded.
    let orgTold = false;
    const watching = new SourceWatch(
      (file) => {
        if (!orgFiles(daemon.config).has(file)) return reload();
        if (orgTold) return;
        orgTold = true;
        log.warn(
          { file },
          "the org file changed: the embedded sandbox reads it at start, so the change takes effect when bothost dev is restarted",
        );
      },
      (folder) => log.warn({ folder }, "cannot watch this folder: edits to the files in it are not reloaded"),
    );
    sources = watching;
    // After each reload: a file a bot starts importing is watched from then on.
    const follow = async () => watching.set(await devSources(configPath, daemon.config));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const reload = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        log.info("a file changed: reloading");
        // The chat line says dev is ready for the next edit, so it follows the new watch set.
        reloadEdited(daemon, log, () =>
          follow()
            .catch(() => {})
            .then(() => process.stdout.write(`${chatLine}\n`)),
        );
      }, SETTLE_MS);
    };
    await follow();
    const bots = report.started.length;
    const failed =
      report.failed.length === 0
        ? ""
        : ` ${report.failed.map((f) => f.name).join(", ")} did not start (above).`;
    process.stdout.write(
      `\n${bots} bot${bots === 1 ? "" : "s"} running on the embedded sandbox.${failed} ` +
        `Saving the config or a bot's files reloads; Ctrl-C stops.\n${chatLine}\n\n`,
    );
    await untilStopped();
    watching.close();
    clearTimeout(timer);
    await booted.stop();
    return ExitCode.Ok;
  } catch (err) {
    sources?.close();
    await booted?.stop().catch(() => {});
    return reportStartupError(err, "dev");
  }
}

/**
 * Boots dev's daemon. Once the config has read, a config or bot module that does not load (a syntax
 * error in a bot's file, a setting its schema refuses) is said, and dev waits for an edit of the
 * files it watches to try again, as it does for an edit while the bots run. Returns the exit code
 * when dev ends instead: no bot on the embedded sandbox, or Ctrl-C while waiting.
 */
async function bootWhenLoads(configPath: string): Promise<Booted | number> {
  // The last config that read: its files are the ones watched while waiting.
  let read: Config | undefined;
  for (let fresh = false; ; fresh = true) {
    try {
      // Before anything starts (nor logs, nor opens the state): dev runs bots on the embedded sandbox only.
      ({ config: read } = await loadConfigWithSource(configPath));
      if (!Object.values(read.bots).some((b) => b.server.url === "sandbox")) {
        process.stderr.write(
          `bothost dev: ${configPath} runs no bot on the embedded sandbox; set server.url: sandbox (see "bothost init").\n`,
        );
        return ExitCode.ConfigInvalid;
      }
      return await bootDaemon(configPath, { sandbox: { chatPage: true }, readableLogs: true, fresh });
    } catch (err) {
      if (read === undefined || !(isConfigError(err) || err instanceof ModuleError)) throw err;
      reportStartupError(err, "dev");
      // Said once the files are watched: an edit made on reading it is seen.
      const edited = nextEdit(await devSources(configPath, read), SETTLE_MS);
      process.stdout.write(
        "Waiting for an edit: saving the config or a bot's files tries again; Ctrl-C stops.\n",
      );
      if (!(await edited)) return ExitCode.Ok;
    }
  }
}

/**
 * The chat page's address, on a line of its own (bold on a terminal): printed last once the bots
 * run, and again after each reload so that it stays below the log lines.
 */
function chatPageLine(url: string, terminal: boolean): string {
  const line = `Chat with your bots: ${url}`;
  return terminal ? `\u001b[1m${line}\u001b[22m` : line;
}

/** A reload after an edit; one that does not load leaves the bots as they were until the next save. */
function reloadEdited(
  daemon: { reload(): Promise<unknown> },
  log: Logger,
  then: () => Promise<unknown>,
): void {
  daemon
    .reload()
    .catch((err: unknown) => {
      log.error(
        "the edit does not load, so the bots keep running as they were; saving the file again reloads it:\n" +
          reloadProblems(err),
      );
    })
    .finally(then);
}
