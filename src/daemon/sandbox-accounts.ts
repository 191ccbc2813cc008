/**
 * On the embedded sandbox a bot without an API key signs in with its account's key, found by its
 * email in the org file. A bot whose email has no account there is a mistake in the config (or
 * the org file), reported as one, located at the bot's email, before anything starts (or a
 * reload is applied): not a failure that takes the daemon down as it builds the bot's client.
 */

import { ConfigError } from "../config/config-error.ts";
import type { ConfigSource } from "../config/config-source.ts";
import type { Config } from "../config/schema.ts";
import type { SandboxControl } from "../sandbox/types.ts";

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
    .map(([name, bot]) =>
      source.problem(
        ["bots", name, "email"],
        `the embedded sandbox has no account ${bot.email}: add it to the org file (server.sandbox.org), or fix the email`,
      ),
    );
  if (problems.length > 0) throw new ConfigError("CONFIG_INVALID", problems);
}

function hasAccount(control: Pick<SandboxControl, "apiKeyOf">, email: string): boolean {
  try {
    control.apiKeyOf(email);
    return true;
  } catch {
    return false;
  }
}
