/**
 * A bot's `settings:` block checked against its module's zod schema, with config-file locations.
 */
import { ConfigError } from "../config/config-error.ts";
import type { ConfigSource } from "../config/config-source.ts";
import { isSecretPath, redact } from "../config/secrets.ts";
import { issuesToProblems } from "../config/zod-problems.ts";
import type { BotDefinition, SettingsOf } from "./define-bot.ts";
import { unknownSettings } from "./unknown-settings.ts";

interface SafeParsable {
  safeParse(input: unknown): { success: boolean; data?: unknown; error?: { issues: unknown[] } };
  safeParseAsync?(
    input: unknown,
  ): Promise<{ success: boolean; data?: unknown; error?: { issues: unknown[] } }>;
}

/**
 * Parses a bot's raw settings with its module's schema. Absent settings parse as `{}`, so a schema
 * whose fields all have defaults needs no `settings:` block. Keys a `z.object` would silently drop
 * are reported too (a misspelt setting should not be ignored); use `z.looseObject` to allow extras.
 *
 * @throws {ConfigError} `CONFIG_INVALID` with a problem per issue at `bots.<name>.settings.<path>`
 *   (file:line:column from `source`), or when settings are given to a bot whose module has no schema.
 * @example
 * ```ts
 * const settings = await validateBotSettings("moderator", definition, config.bots.moderator!.settings, source);
 * await definition.setup(bot, settings);
 * ```
 */
export async function validateBotSettings<D extends BotDefinition>(
  botName: string,
  definition: D,
  rawSettings: unknown,
  source: ConfigSource,
): Promise<SettingsOf<D["settings"]>> {
  const at = ["bots", botName, "settings"];
  const schema = definition.settings as SafeParsable | undefined;
  if (schema === undefined) {
    if (rawSettings === undefined || rawSettings === null) return undefined as SettingsOf<D["settings"]>;
    throw new ConfigError("CONFIG_INVALID", [
      source.problem(
        at,
        "is set, but the bot's module declares no settings schema: remove it, or add settings: z.object({ … }) to the module",
        "key",
      ),
    ]);
  }
  const input = rawSettings ?? {};
  // safeParse throws on schemas with async refinements; those need safeParseAsync.
  const result = schema.safeParseAsync ? await schema.safeParseAsync(input) : schema.safeParse(input);
  const unknown = unknownSettings(schema, input, at, source);
  if (result.success && unknown.length === 0) return result.data as SettingsOf<D["settings"]>;
  const issues = (result.error?.issues ?? []) as Parameters<typeof issuesToProblems>[0];
  const secrets = secretStrings(input, at);
  const problems = [...issuesToProblems(issues, input, schema, source, at), ...unknown].map((p) => ({
    ...p,
    path: redact(p.path, secrets),
    message: redact(p.message, secrets),
  }));
  throw new ConfigError("CONFIG_INVALID", problems);
}

// Strings under secret-looking keys (token, api_key, password…), to keep them out of messages
// written by the module's own schema.
function secretStrings(value: unknown, at: readonly (string | number)[], out: string[] = []): string[] {
  if (typeof value === "string" && isSecretPath(at)) out.push(value);
  else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) secretStrings(item, [...at, key], out);
  }
  return out;
}
