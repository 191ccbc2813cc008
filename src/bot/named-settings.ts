/**
 * Settings that name something on the server: a channel (`channelSetting()`) or a user group
 * (`groupSetting()`), by name or id. `bothost check` looks each one a bot's settings give up on
 * the server and reports one the bot cannot see, located in the config; `bothost run` warns of
 * them as the bot starts. A misspelt channel would otherwise fail every send there, or exempt
 * nothing from a rule, and a misspelt group would ask nobody, unnoticed until it mattered.
 */
import { z } from "zod";
import type { ConfigPath } from "../config/config-problem.ts";

/** What a named setting names on the server. */
export type NamedKind = "channel" | "group";

/** Marks the definition of a named setting's schema with its kind: kept by zod's clones (`.describe()`; `.optional()` wraps it). */
const NAMES = Symbol.for("bothost.named-setting");

type NameOrId = z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>;

function marked(kind: NamedKind, schema: z.ZodType | undefined): z.ZodType {
  const named = schema ?? z.union([z.string().trim().min(1), z.number().int().positive()]);
  Object.defineProperty(named._zod.def, NAMES, { value: kind, enumerable: true, configurable: true });
  return named;
}

/**
 * A setting naming a channel: its name (trimmed, not empty) or its id (a positive whole number);
 * or, given `schema` (one of your own, e.g. names only), that schema, marked as one.
 *
 * @example
 * ```ts
 * settings: z.object({ channel: channelSetting(), exempt: z.array(channelSetting()).default([]) })
 * ```
 */
export function channelSetting(): NameOrId;
export function channelSetting<S extends z.ZodType<string | number>>(schema: S): S;
export function channelSetting(schema?: z.ZodType): z.ZodType {
  return marked("channel", schema);
}

/**
 * A setting naming a user group: its name (trimmed, not empty) or its id; or, given `schema`,
 * that schema, marked as one.
 *
 * @example
 * ```ts
 * settings: z.object({ group: groupSetting(z.string().min(1)) }) // ctx.groups.members(settings.group)
 * ```
 */
export function groupSetting(): NameOrId;
export function groupSetting<S extends z.ZodType<string | number>>(schema: S): S;
export function groupSetting(schema?: z.ZodType): z.ZodType {
  return marked("group", schema);
}

/** A channel or group a bot's settings name, and where (`bots.<name>.settings…`). */
export interface NamedEntry {
  kind: NamedKind;
  path: ConfigPath;
  value: string | number;
}

interface Def {
  type?: string;
  shape?: Record<string, unknown>;
  element?: unknown;
  valueType?: unknown;
  innerType?: unknown;
  in?: unknown;
  out?: unknown;
  options?: unknown[];
  left?: unknown;
  right?: unknown;
  getter?: () => unknown;
  [NAMES]?: NamedKind;
}

/**
 * The named settings in `value` (a bot's settings, parsed by `schema`), at `at` and below: each
 * field, list item or record value whose schema is a {@link channelSetting} or a
 * {@link groupSetting}, through optional, default, pipe, lazy and intersection wrappers; in a
 * union, the first form `value` passes.
 */
export function namedIn(schema: unknown, value: unknown, at: ConfigPath): NamedEntry[] {
  const found: NamedEntry[] = [];
  const visit = (node: unknown, v: unknown, path: ConfigPath, depth: number): void => {
    const def = (node as { _zod?: { def?: Def } } | undefined)?._zod?.def;
    if (def === undefined || depth > 32 || v === undefined || v === null) return;
    const kind = def[NAMES];
    if (kind !== undefined) {
      if (typeof v === "string" || typeof v === "number") found.push({ kind, path, value: v });
      return;
    }
    const next = depth + 1;
    const items = typeof v === "object" ? (v as Record<string, unknown>) : undefined;
    switch (def.type) {
      case "object":
        for (const [key, field] of Object.entries(def.shape ?? {}))
          if (items && Object.hasOwn(items, key)) visit(field, items[key], [...path, key], next);
        return;
      case "array":
        if (Array.isArray(v))
          for (const [i, item] of v.entries()) visit(def.element, item, [...path, i], next);
        return;
      case "record":
        for (const [key, item] of Object.entries(items ?? {}))
          visit(def.valueType, item, [...path, key], next);
        return;
      case "union":
        visit(
          def.options?.find((o) => passes(o, v)),
          v,
          path,
          next,
        );
        return;
      case "intersection":
        visit(def.left, v, path, next);
        visit(def.right, v, path, next);
        return;
      case "lazy":
        visit(def.getter?.(), v, path, next);
        return;
      case "pipe": {
        // The parsed value is the pipe's output: its schema, unless it is a `.transform()` step.
        const out = def.out as { _zod?: { def?: Def } } | undefined;
        visit(out?._zod?.def?.type === "transform" ? def.in : def.out, v, path, next);
        return;
      }
      default:
        if (def.innerType !== undefined) visit(def.innerType, v, path, next);
    }
  };
  visit(schema, value, at, 0);
  return found;
}

/** Whether `value` passes `schema` (one with async checks cannot be told: it does not). */
function passes(schema: unknown, value: unknown): boolean {
  try {
    return (schema as { safeParse(v: unknown): { success: boolean } }).safeParse(value).success;
  } catch {
    return false;
  }
}
