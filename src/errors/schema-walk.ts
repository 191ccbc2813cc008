/**
 * A value walked along the schema that parses it (zod 4's `_zod.def`, zod 3's `_def`), for the
 * checks made of a bot's settings beyond parsing them: keys a schema would drop in silence
 * (bot/validate-settings.ts), and the channels and groups they name (bot/named-settings.ts).
 */
import { innerOf, type SchemaDef, shapeOf } from "./schema-keys.ts";

/** What a walk's visitor is shown: a schema node, its definition, the part of the value it holds, and where. */
export type SchemaVisit = (
  node: unknown,
  def: SchemaDef,
  value: unknown,
  path: (string | number)[],
) => unknown;

interface WalkedDef extends SchemaDef {
  left?: unknown;
  right?: unknown;
  getter?: () => unknown;
  typeName?: string;
}

/**
 * Walk `value` along `schema` from path `at`: `visit` sees every schema node met (wrappers such as
 * optional, default, pipe and lazy, and what they wrap, alike) with the part of the value it
 * holds, and returns true to go no deeper there. Then each field of an object present in the
 * value, each item of a list and each value of a record is walked with its own schema; a union's
 * value with the option it parses with the fewest issues (the first on a tie); an intersection's
 * with both sides.
 */
export function walkSchema(
  schema: unknown,
  value: unknown,
  at: readonly (string | number)[],
  visit: SchemaVisit,
): void {
  const step = (node: unknown, v: unknown, path: (string | number)[], depth: number): void => {
    const holder = node as { _zod?: { def?: WalkedDef }; _def?: WalkedDef } | undefined;
    const def = holder?._zod?.def ?? holder?._def;
    if (def === undefined || depth > 32 || visit(node, def, v, path) === true) return;
    const next = depth + 1;
    if (def.options !== undefined) {
      step(optionFor(def.options, v), v, path, next);
      return;
    }
    const shape = shapeOf(def);
    const fields =
      v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
    if (shape !== undefined) {
      for (const [key, item] of Object.entries(fields ?? {}))
        if (Object.hasOwn(shape, key)) step(shape[key], item, [...path, key], next);
      return;
    }
    const element =
      def.type === "array"
        ? def.element
        : def.typeName === "ZodArray"
          ? (def as { type?: unknown }).type
          : undefined;
    if (element !== undefined) {
      if (Array.isArray(v)) for (const [i, item] of v.entries()) step(element, item, [...path, i], next);
      return;
    }
    if (def.type === "record" || def.typeName === "ZodRecord") {
      for (const [key, item] of Object.entries(fields ?? {})) step(def.valueType, item, [...path, key], next);
      return;
    }
    if (def.left !== undefined || def.right !== undefined) {
      step(def.left, v, path, next);
      step(def.right, v, path, next);
      return;
    }
    const inner = typeof def.getter === "function" ? def.getter() : innerOf(def);
    if (inner !== undefined) step(inner, v, path, next);
  };
  step(schema, value, [...at], 0);
}

/** The option of a union `value` is held to: the one it parses with the fewest issues, the first on a tie. */
function optionFor(options: readonly unknown[], value: unknown): unknown {
  const issues = options.map((option) => issueCount(option, value));
  return options[issues.indexOf(Math.min(...issues))];
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
