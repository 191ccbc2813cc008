/**
 * What a command's zod schemas say about themselves: the type a user must type, whether the value
 * may be left out, its description; and how a typed word becomes the schema's input (words are
 * strings: "5" is offered to a number schema as 5, "yes" to a boolean one as true).
 */
import type { z } from "zod";

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  entries?: Record<string, string | number>;
  values?: unknown[];
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schema under optional, default, nullable, catch and pipe wrappers. */
function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (let i = 0; i < 10; i++) {
    const def = defOf(s);
    const inner = def.innerType ?? (def.type === "pipe" ? def.in : undefined);
    if (inner === undefined) return s;
    s = inner;
  }
  return s;
}

/** The type of value a schema takes, as the help and the JSON export name it. */
export function typeOf(schema: z.ZodType): string {
  const def = defOf(unwrap(schema));
  if (def.type === "enum") return "choice";
  if (def.type === "literal") return "choice";
  return def.type;
}

/** The values of an enum or literal schema, for the help. */
export function choicesOf(schema: z.ZodType): string[] | undefined {
  const def = defOf(unwrap(schema));
  if (def.type === "enum" && def.entries) return Object.values(def.entries).map(String);
  if (def.type === "literal" && def.values) return def.values.map(String);
  return undefined;
}

/** Whether the value may be left out (the schema accepts `undefined`). */
export function isOptional(schema: z.ZodType): boolean {
  return schema.safeParse(undefined).success;
}

/** A description set with `.describe()`, on the schema or under its wrappers. */
export function descriptionOf(schema: z.ZodType): string | undefined {
  let s: z.ZodType | undefined = schema;
  for (let i = 0; i < 10 && s; i++) {
    if (s.description) return s.description;
    const def = defOf(s);
    s = def.innerType ?? (def.type === "pipe" ? def.in : undefined);
  }
  return undefined;
}

/** Whether an option is a flag (`--verbose`, no value): its schema is a boolean. */
export function isFlag(schema: z.ZodType): boolean {
  return typeOf(schema) === "boolean";
}

const TRUE = new Set(["true", "yes", "on", "1"]);
const FALSE = new Set(["false", "no", "off", "0"]);

/** Plain decimal notation: `42`, `-7`, `1.5`, `.5`; no hex, octal, binary, exponent or `Infinity`. */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d+)?|\.\d+)$/;
const INTEGER = /^[+-]?\d+$/;

/** Whether a word is a number in a notation arguments do not take (`0x10`, `1e3`, `Infinity`). */
export function isOtherNumberNotation(word: string): boolean {
  return !DECIMAL.test(word) && word.trim() !== "" && !Number.isNaN(Number(word));
}

/**
 * A typed word as the input its schema expects. Numbers are read exactly as written in decimal
 * digits (a bigint keeps every digit); any other word stays a string for the schema to refuse.
 */
export function inputFor(schema: z.ZodType, word: string): unknown {
  const type = typeOf(schema);
  if (type === "number") return DECIMAL.test(word) ? Number(word) : word;
  if (type === "bigint") return INTEGER.test(word) ? BigInt(word) : word;
  if (type === "boolean") {
    const lower = word.toLowerCase();
    return TRUE.has(lower) ? true : FALSE.has(lower) ? false : word;
  }
  return word;
}
