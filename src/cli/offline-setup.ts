/**
 * Run a bot's `setup` offline, with a bot object that only records what it declares (commands,
 * announcements, cron jobs): what `bothost schedule preview` and `bothost commands` read.
 */
import { type BotHandle, BotSetupError } from "../bot/bot-handle.ts";
import type { LoadedBot } from "../bot/load-bots.ts";
import { DeclarationsRefused, refusalWords } from "../bot/setup-error.ts";
import { loadConfigWithPlaceholders } from "../config/admin-view.ts";
import { ExitCode } from "../config/exit-codes.ts";
import { runSetupOffline } from "../daemon/trial-setup.ts";
import { BothostError } from "../errors/bothost-error.ts";

/**
 * The config for an offline command: a variable not set in this shell (an API key, usually) is
 * read as a placeholder, and one line on stderr names them; any other problem is thrown.
 */
export async function loadConfigOffline(file: string, command: string) {
  const loaded = await loadConfigWithPlaceholders(file);
  const { placeholders } = loaded;
  if (placeholders.length > 0) {
    process.stderr.write(
      `bothost ${command}: ${placeholders.join(", ")} ${placeholders.length === 1 ? "is not set here; read as a placeholder" : "are not set here; read as placeholders"} (nothing is sent).\n`,
    );
  }
  return loaded;
}

/** The bot's declarations, or the exit code once a failing setup was reported. */
export async function setUpOffline(bot: LoadedBot, command: string): Promise<BotHandle<unknown> | number> {
  const ran = await runSetupOffline({
    name: bot.name,
    module: bot.config.module,
    definition: bot.definition,
    settings: bot.settings,
    commandPrefix: bot.config.command_prefix,
  });
  if (ran.handle) return ran.handle;
  if (ran.calledServer !== undefined) {
    // What this command lists comes from the whole setup: a server call cuts it short.
    return setupFailed(
      command,
      bot.name,
      new BothostError(
        "PREVIEW_OFFLINE",
        `bot.api.${ran.calledServer} was used during setup; "bothost ${command}" runs setup offline. ` +
          "Call the server from handlers or jobs, not from setup.",
      ),
    );
  }
  return setupFailed(command, bot.name, ran.error);
}

/** A setup that throws: the bot's declarations are wrong (exit 2) or its code failed (exit 1). */
function setupFailed(command: string, name: string, err: unknown): number {
  if (err instanceof BotSetupError || err instanceof DeclarationsRefused) {
    for (const refused of err instanceof DeclarationsRefused ? err.refusals : [err])
      process.stderr.write(`bothost ${command}: bots.${name}: ${refusalWords(refused)}\n`);
    return ExitCode.ConfigInvalid;
  }
  const message = err instanceof Error ? err.message : String(err);
  const code = err instanceof BothostError ? ` [${err.code}]` : "";
  process.stderr.write(`bothost ${command}: bots.${name}: setup failed: ${message}${code}\n`);
  return ExitCode.RuntimeFailure;
}
