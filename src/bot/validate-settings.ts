import { ConfigError } from "../config/config-error.ts";
import type { ConfigPath, ConfigProblem } from "../config/config-problem.ts";
import type { ConfigSource } from "../config/config-source.ts";
import { isSecretPath, redact } from "../config/secrets.ts";
import { issuesToProblems } from "../config/zod-problems.ts";
import { suggest } from "../errors/did-you-mean.ts";
import { type SchemaDef, shapeOf, unwrapSchema } from "../errors/schema-keys.ts";
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

/**
 * A problem for each key of `input` that a stripping object schema (zod 4 `z.object`, zod 3
 * `.strip()`) would silently drop, at any depth, in lists' items too. Strict and loose objects are left alone: zod
 * reports the first, and the second wants extra keys.
 */
function unknownSettings(
  schema: unknown,
  input: unknown,
  at: ConfigPath,
  source: ConfigSource,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const visit = (node: unknown, value: unknown, path: ConfigPath, depth: number): void => {
    if (depth > 32 || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      // A list of objects (announcements: [{ … }]): each item against the list's element schema.
      const element = elementOf(unwrapSchema(node));
      if (element !== undefined)
        for (const [i, item] of value.entries()) visit(element, item, [...path, i], depth + 1);
      return;
    }
    const def = unwrapSchema(optionFor(node, value));
    const shape = shapeOf(def);
    if (def === undefined || shape === undefined) return;
    const strips = def.type === "object" ? def.catchall === undefined : def.unknownKeys === "strip";
    for (const [key, item] of Object.entries(value)) {
      if (Object.hasOwn(shape, key)) visit(shape[key], item, [...path, key], depth + 1);
      else if (strips) {
        const close = suggest(key, Object.keys(shape));
        const hint = close
          ? `did you mean "${close}"?`
          : `this bot's settings here are: ${Object.keys(shape).join(", ")}`;
        problems.push(source.problem([...path, key], `is not a setting of this bot: ${hint}`, "key"));
      }
    }
  };
  visit(schema, input, at, 0);
  return problems;
}

/** A list schema's element schema: zod 4's `element`, zod 3's `type` of a `ZodArray`. */
function elementOf(def: SchemaDef | undefined): unknown {
  if (def?.type === "array") return def.element;
  const legacy = def as { typeName?: string; type?: unknown } | undefined;
  return legacy?.typeName === "ZodArray" ? legacy.type : undefined;
}

/**
 * For a union (through optional/default wrappers), the option `value` is checked against: the one
 * it parses with the fewest issues (the first on a tie), so that `{ type: hmac, header }` is held
 * to the hmac option's fields, not to the first option's. Any other schema as it is.
 */
function optionFor(node: unknown, value: unknown): unknown {
  let current = node;
  for (let i = 0; i < 20 && current; i++) {
    const holder = current as { _zod?: { def?: SchemaDef }; _def?: SchemaDef };
    const def = holder._zod?.def ?? holder._def;
    if (def === undefined || def.shape !== undefined) return current;
    if (def.options !== undefined) {
      const issues = def.options.map((option) => issueCount(option, value));
      return def.options[issues.indexOf(Math.min(...issues))];
    }
    current = def.innerType ?? def.in;
  }
  return node;
}

function issueCount(schema: unknown, value: unknown): number {
  try {
    const result = (schema as { safeParse(v: unknown): { error?: { issues: unknown[] } } }).safeParse(value);
    return result.error?.issues.length ?? 0;
  } catch {
    // An async refinement: safeParse throws; such an option is taken last.
    return Number.POSITIVE_INFINITY;
  }
}
