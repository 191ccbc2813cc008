import { ConfigError } from "../config/config-error.ts";
import type { ConfigPath, ConfigProblem } from "../config/config-problem.ts";
import type { ConfigSource } from "../config/config-source.ts";
import { isSecretPath, redact, redactProblem } from "../config/secrets.ts";
import { issuesToProblems } from "../config/zod-problems.ts";
import { suggest } from "../errors/did-you-mean.ts";
import { shapeOf } from "../errors/schema-keys.ts";
import { walkSchema } from "../errors/schema-walk.ts";
import { whereThrown } from "../errors/where-thrown.ts";
import type { BotDefinition, SettingsOf } from "./define-bot.ts";

/**
 * Parses a bot's raw settings with its module's schema. Absent settings parse as `{}`, so a schema
 * whose fields all have defaults needs no `settings:` block. Keys a `z.object` would silently drop
 * are reported too (a misspelt setting should not be ignored); use `z.looseObject` to allow extras.
 *
 * @throws {ConfigError} `CONFIG_INVALID` with a problem per issue at `bots.<name>.settings.<path>`
 *   (file:line:column from `source`), or when settings are given to a bot whose module has no schema.
 */
export async function validateBotSettings<D extends BotDefinition>(
  botName: string,
  definition: D,
  rawSettings: unknown,
  source: ConfigSource,
): Promise<SettingsOf<D["settings"]>> {
  const at = ["bots", botName, "settings"];
  const schema = definition.settings;
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
  let result: Awaited<ReturnType<typeof schema.safeParse>>;
  try {
    // safeParse throws on schemas with async refinements; those need safeParseAsync.
    result = schema.safeParseAsync ? await schema.safeParseAsync(input) : schema.safeParse(input);
  } catch (err) {
    throw new ConfigError("CONFIG_INVALID", [source.problem(at, threwWords(err, input, at), "key")]);
  }
  const unknown = unknownSettings(schema, input, at, source);
  if (result.success && unknown.length === 0) return result.data as SettingsOf<D["settings"]>;
  const issues = (result.error?.issues ?? []) as Parameters<typeof issuesToProblems>[0];
  const secrets = secretStrings(input, at);
  // A message in words that hold no input (a secret's "is too short: …") is kept whole: hiding a
  // secret that is also one of its words ("short") would garble it.
  const problems = [...issuesToProblems(issues, input, schema, source, at), ...unknown].map((p) =>
    redactProblem(p, secrets),
  );
  throw new ConfigError("CONFIG_INVALID", problems);
}

/**
 * What the module's settings schema threw while checking `input` (a refinement or transform of its
 * own that does not expect a value the checks before it refused): what and where in the bot's
 * code, without a stack trace, and no secret among the settings.
 */
function threwWords(err: unknown, input: unknown, at: ConfigPath): string {
  const where = whereThrown(err);
  const what = redact(
    err instanceof Error ? `${err.name}: ${err.message}` : String(err),
    secretStrings(input, at),
  );
  return `could not be checked: the bot's settings schema threw ${what}${where ? ` at ${where}` : ""} (a check of its own that a value here makes throw: fix the value, or the schema)`;
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

/**
 * A problem for each key of `input` that a stripping object schema (zod 4 `z.object`, zod 3
 * `.strip()`) would silently drop, at any depth, in lists' items too (a union's value held to the
 * option it parses with the fewest issues). Strict and loose objects are left alone: zod reports
 * the first, and the second wants extra keys.
 */
function unknownSettings(
  schema: unknown,
  input: unknown,
  at: ConfigPath,
  source: ConfigSource,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  walkSchema(schema, input, at, (_, def, value, path) => {
    const shape = shapeOf(def);
    if (shape === undefined || value === null || typeof value !== "object" || Array.isArray(value)) return;
    const strips = def.type === "object" ? def.catchall === undefined : def.unknownKeys === "strip";
    if (!strips) return;
    for (const key of Object.keys(value)) {
      if (Object.hasOwn(shape, key)) continue;
      const close = suggest(key, Object.keys(shape));
      const hint = close
        ? `did you mean "${close}"?`
        : `this bot's settings here are: ${Object.keys(shape).join(", ")}`;
      problems.push(source.problem([...path, key], `is not a setting of this bot: ${hint}`, "key"));
    }
  });
  return problems;
}
