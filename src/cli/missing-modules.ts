/**
 * What `bothost status` finds wrong with the bots' modules on disk, without loading any: kept
 * apart from the offline setup (offline-setup.ts), whose imports (the bot runtime, pino) a status
 * query does not need.
 */
import { botModuleFile } from "../bot/load-module.ts";
import { isModuleError, moduleProblem } from "../bot/module-error.ts";
import { loadConfigWithPlaceholders } from "../config/admin-view.ts";
import type { ConfigProblem } from "../config/config-problem.ts";

/**
 * The bots' modules that a file which itself loads names but that cannot be found: what a reload
 * of it would refuse, found without running any bot's code (a status query runs none; `check`
 * also tries settings and setup). Variables unset in this shell read as placeholders. Empty when
 * the file itself has problems (those are reported on their own).
 */
export async function missingModulesOnDisk(file: string): Promise<ConfigProblem[]> {
  let loaded: Awaited<ReturnType<typeof loadConfigWithPlaceholders>>;
  try {
    loaded = await loadConfigWithPlaceholders(file);
  } catch {
    return [];
  }
  const { config, source } = loaded;
  const problems: ConfigProblem[] = [];
  for (const [name, bot] of Object.entries(config.bots)) {
    try {
      await botModuleFile(bot.module, { configDir: source.dir, botName: name });
    } catch (err) {
      if (!isModuleError(err)) throw err;
      problems.push(moduleProblem(source, name, bot.module, err));
    }
  }
  return problems;
}
