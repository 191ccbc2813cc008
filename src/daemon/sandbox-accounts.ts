/**
 * On the embedded sandbox a bot without an API key signs in with its account's key, found by its
 * email in the org file. A bot whose email has no account there is a mistake in the config (or
 * the org file), reported as one, located at the bot's email, before anything starts (or a
 * reload is applied): not a failure that takes the daemon down as it builds the bot's client.
 * An outgoing-webhook bot whose account would send it nothing is said too.
 */

import { ConfigError } from "../config/config-error.ts";
import type { ConfigProblem } from "../config/config-problem.ts";
import type { ConfigSource } from "../config/config-source.ts";
import type { BotConfig, Config } from "../config/schema.ts";
import type { SandboxControl } from "../sandbox/types.ts";
import { safeEqual } from "../webhook/constant-time.ts";

/** Throws `CONFIG_INVALID` naming each bot of `only` (default all) whose sandbox account is missing. */
export function checkSandboxAccounts(
  config: Config,
  source: ConfigSource,
  control: Pick<SandboxControl, "apiKeyOf">,
  only?: ReadonlySet<string>,
): void {
  const problems = Object.entries(config.bots)
    .filter(([name, bot]) => (only?.has(name) ?? true) && bot.server.url === "sandbox" && bot.api_key === "")
    .filter(([, bot]) => !hasAccount(control, bot.email))
    .map(([name, bot]) => noAccountProblem(source, name, bot.email));
  if (problems.length > 0) throw new ConfigError("CONFIG_INVALID", problems);
}

/** Bot `name`'s `email`, which the embedded sandbox has no account for, located at it. */
export function noAccountProblem(source: ConfigSource, name: string, email: string): ConfigProblem {
  return source.problem(
    ["bots", name, "email"],
    `the embedded sandbox has no account ${email}: add it to the org file (server.sandbox.org), or fix the email`,
  );
}

function hasAccount(control: Pick<SandboxControl, "apiKeyOf">, email: string): boolean {
  try {
    control.apiKeyOf(email);
    return true;
  } catch {
    return false;
  }
}

/**
 * On the embedded sandbox, why an outgoing-webhook bot's account in the org file would never
 * reach it: not an outgoing-webhook bot, or its token not the config's (every delivery refused
 * 401). Tokens are compared in constant time, never shown. `check` reports it; `run` warns.
 */
export function outgoingAccountProblem(
  name: string,
  bot: BotConfig,
  control: Pick<SandboxControl, "users">,
): string | undefined {
  const token = bot.outgoing_webhook?.token;
  if (bot.server.url !== "sandbox" || token === undefined) return undefined;
  const account = control.users().find((u) => u.email === bot.email);
  if (account === undefined) return undefined;
  const orgFile = "the org file (server.sandbox.org)";
  if (account.bot_type !== 3 && account.bot_type !== 4)
    return `${bot.email} is not an outgoing-webhook bot on the embedded sandbox, so it is sent no deliveries: give it type: outgoing in ${orgFile}, with outgoing: { url, token }`;
  if (!safeEqual(account.outgoing_token ?? "", token))
    return `the outgoing token of ${bot.email} in ${orgFile} is not bots.${name}.outgoing_webhook.token: every delivery would be refused 401; give the account the same token (outgoing: { token })`;
  return undefined;
}
