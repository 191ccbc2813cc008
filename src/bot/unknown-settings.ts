/**
 * Settings keys a bot's schema would silently drop: zod's `z.object` strips unknown keys, so a
 * misspelt setting would otherwise be ignored without a word.
 */
import type { ConfigPath, ConfigProblem } from "../config/config-error.ts";
import type { ConfigSource } from "../config/config-source.ts";
import { suggest } from "../config/did-you-mean.ts";

interface Def {
  type?: string;
  typeName?: string;
  shape?: Record<string, unknown> | (() => Record<string, unknown>);
  catchall?: unknown;
  unknownKeys?: string;
  innerType?: unknown;
  in?: unknown;
}

/**
 * A problem for each key of `input` that a stripping object schema (zod 4 `z.object`, zod 3
 * `.strip()`) does not declare, at any depth of nested objects. Strict and loose objects are left
 * alone: zod reports the first, and the second wants extra keys.
 */
export function unknownSettings(
  schema: unknown,
  input: unknown,
  at: ConfigPath,
  source: ConfigSource,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const visit = (node: unknown, value: unknown, path: ConfigPath, depth: number): void => {
    if (depth > 32 || value === null || typeof value !== "object" || Array.isArray(value)) return;
    const def = unwrap(node);
    if (def === undefined || def.shape === undefined) return;
    const shape = typeof def.shape === "function" ? def.shape() : def.shape;
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

// Through optional/default/pipe wrappers to the object schema, in zod 4 (_zod.def) or 3 (_def).
function unwrap(node: unknown): Def | undefined {
  let current = node;
  for (let i = 0; i < 20 && current; i++) {
    const holder = current as { _zod?: { def?: Def }; _def?: Def };
    const def = holder._zod?.def ?? holder._def;
    if (def === undefined) return undefined;
    const inner = def.innerType ?? def.in;
    if (def.shape !== undefined || inner === undefined) return def;
    current = inner;
  }
  return undefined;
}
