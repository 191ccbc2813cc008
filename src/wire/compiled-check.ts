/**
 * A zod schema turned into a plain predicate, for the event hot path.
 *
 * Why: `safeParse` of a message event cost about 1.3 µs (as much as `JSON.parse` of it), mostly
 * copying every field into a new object. For the schemas events use (loose objects, strings,
 * safe integers, enums, literals, unions, arrays, tuples, records, optional, nullable) zod's
 * output equals its input, so a predicate that accepts exactly what the schema accepts can hand
 * the raw object on unchanged. The predicate is generated as one JavaScript function per object
 * or array schema (the way ajv compiles JSON Schema): closures calling closures cost 0.4 µs per
 * message, generated code about a quarter of that.
 *
 * A schema with anything whose output can differ from its input (defaults, transforms, stripping
 * objects, refinements, other checks) is not compiled: the caller keeps using zod for it. A value
 * the predicate rejects goes through zod too, which then explains why
 * (test/wire/compiled-check.test.ts holds the two to the same verdicts).
 */
import type { z } from "zod";

export type Check = (value: unknown) => boolean;

interface Def {
  type: string;
  [key: string]: unknown;
}

const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

class Unsupported extends Error {}

/** The predicate for `schema`, or undefined when the schema holds something it cannot mirror. */
export function compileCheck(schema: z.ZodType): Check | undefined {
  const out = new Output();
  let root: string;
  try {
    root = out.fn(defOf(schema));
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  const source = `${out.functions.join("\n")}\nreturn ${root};`;
  return new Function("sets", source)(out.sets) as Check;
}

/** The generated functions (`f0`, `f1`, …) and the value sets of enums and literals (`sets[i]`). */
class Output {
  readonly functions: string[] = [];
  readonly sets: Set<unknown>[] = [];

  /** A function checking `def` as a whole; returns its name. */
  fn(def: Def): string {
    const index = this.functions.length;
    this.functions.push(""); // reserve the slot: nested schemas add their functions after it
    const body =
      def.type === "object"
        ? this.objectBody(def)
        : ["array", "tuple", "record"].includes(def.type)
          ? this.containerBody(def)
          : `return ${this.expr(def, "v")};`;
    this.functions[index] = `function f${index}(v) {\n${body}\n}`;
    return `f${index}`;
  }

  /** A JavaScript expression, true when `value` (an expression without side effects) passes. */
  expr(def: Def, value: string): string {
    switch (def.type) {
      case "string":
        noChecks(def);
        return `typeof ${value} === "string"`;
      case "boolean":
        return `typeof ${value} === "boolean"`;
      case "null":
        return `${value} === null`;
      case "unknown":
      case "any":
        return "true";
      case "number":
        return numberExpr(def, value);
      case "enum":
        return this.oneOf(Object.values(def.entries as Record<string, unknown>), value);
      case "literal":
        return this.oneOf(def.values as unknown[], value);
      case "optional":
        return `(${value} === undefined || ${this.expr(defOf(def.innerType), value)})`;
      case "nullable":
        return `(${value} === null || ${this.expr(defOf(def.innerType), value)})`;
      case "union":
        // A discriminated union picks its option by a literal each option checks itself, so
        // "some option accepts" is the same verdict.
        return `(${(def.options as unknown[]).map((o) => this.expr(defOf(o), value)).join(" || ")})`;
      case "array":
      case "tuple":
      case "record":
      case "object":
        return `${this.fn(def)}(${value})`;
      default:
        throw new Unsupported(def.type);
    }
  }

  private oneOf(values: unknown[], value: string): string {
    this.sets.push(new Set(values));
    return `sets[${this.sets.length - 1}].has(${value})`;
  }

  private objectBody(def: Def): string {
    const catchall = def.catchall === undefined ? undefined : defOf(def.catchall).type;
    // A plain z.object strips unknown keys (its output differs); a strict one rejects them.
    if (catchall !== "unknown" && catchall !== "any") throw new Unsupported(`object catchall ${catchall}`);
    const lines = ['if (typeof v !== "object" || v === null || Array.isArray(v)) return false;'];
    const shape = def.shape as Record<string, unknown>;
    for (const [i, key] of Object.keys(shape).entries()) {
      lines.push(`const k${i} = v[${JSON.stringify(key)}];`);
      lines.push(`if (!(${this.expr(defOf(shape[key]), `k${i}`)})) return false;`);
    }
    return `${lines.join("\n")}\nreturn true;`;
  }

  /** The body of an array, tuple or record function (its value is `v`). */
  private containerBody(def: Def): string {
    switch (def.type) {
      case "array":
        noChecks(def);
        return `if (!Array.isArray(v)) return false;
for (let i = 0; i < v.length; i++) { const e = v[i]; if (!(${this.expr(defOf(def.element), "e")})) return false; }
return true;`;
      case "tuple": {
        if (def.rest !== null && def.rest !== undefined) throw new Unsupported("tuple rest");
        const items = (def.items as unknown[]).map(defOf);
        if (items.some((d) => d.type === "optional")) throw new Unsupported("optional tuple item");
        const checks = items.map((d, i) => `(${this.expr(d, `v[${i}]`)})`);
        return `return Array.isArray(v) && v.length === ${items.length}${checks.map((c) => ` && ${c}`).join("")};`;
      }
      default: {
        const key = defOf(def.keyType);
        if (key.type !== "string" || Array.isArray(key.checks)) throw new Unsupported("record key");
        return `if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
for (const key in v) { if (!Object.hasOwn(v, key)) continue; const e = v[key]; if (!(${this.expr(defOf(def.valueType), "e")})) return false; }
return true;`;
      }
    }
  }
}

function noChecks(def: Def): void {
  if (Array.isArray(def.checks) && def.checks.length > 0) throw new Unsupported(`${def.type} checks`);
}

function numberExpr(def: Def, value: string): string {
  const checks = (def.checks ?? []) as { _zod: { def: { check: string; format?: string } } }[];
  if (checks.length === 0) return `(typeof ${value} === "number" && Number.isFinite(${value}))`;
  const only = checks.length === 1 ? checks[0]?._zod.def : undefined;
  if (only?.check === "number_format" && only.format === "safeint") return `Number.isSafeInteger(${value})`;
  throw new Unsupported("number checks");
}
