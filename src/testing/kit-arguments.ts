/**
 * The testing kit's arguments checked before use: a mistake in a test is told in words naming
 * what to change, never as a TypeError from deep inside the kit.
 */
import type { BotDefinition } from "../bot/define-bot.ts";
import { definitionProblems } from "../bot/definition-problems.ts";
import { BothostError } from "../errors/bothost-error.ts";

/**
 * `bot`, given as a value to `runBot` (or `restart`), when it is a bot; else `MODULE_INVALID`,
 * worded as for a module that exports no bot.
 */
export function givenBot<T>(bot: T, where: string): T & BotDefinition<never, never> {
  const problems = definitionProblems(bot, true);
  if (problems.length > 0)
    throw new BothostError("MODULE_INVALID", `${where}: the bot given ${problems.join("; ")}`);
  return bot as T & BotDefinition<never, never>;
}
