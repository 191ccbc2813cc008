/**
 * `channelSetting()`: a bot setting that names a channel, by name or id. `bothost check` looks
 * each one the settings give up on the server and reports one the bot cannot see, located in the
 * config; `bothost run` warns of them as the bot starts. A misspelt channel would otherwise fail
 * every send there, or exempt nothing from a rule, unnoticed until it mattered.
 */
import { z } from "zod";
import type { ConfigPath } from "../config/config-problem.ts";

/** Marks the definition of a channel setting's schema: kept by zod's clones (`.describe()`, `.optional()` wraps it). */
const CHANNEL = Symbol.for("bothost.channel-setting");

/**
 * A setting naming a channel: its name (trimmed, not empty) or its id (a positive whole number);
 * or, given `schema` (one of your own, e.g. names only), that schema, marked as one.
 *
 * @example
 * ```ts
 * settings: z.object({ channel: channelSetting(), exempt: z.array(channelSetting()).default([]) })
 * ```
 */
export function channelSetting(): z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>;
export function channelSetting<S extends z.ZodType<string | number>>(schema: S): S;
export function channelSetting(schema?: z.ZodType): z.ZodType {
  const marked = schema ?? z.union([z.string().trim().min(1), z.number().int().positive()]);
  Object.defineProperty(marked._zod.def, CHANNEL, { value: true, enumerable: true, configurable: true });
  return marked;
}

/** A channel a bot's settings name, and where (`bots.<name>.settings…`). */
export interface ChannelEntry {
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
  [CHANNEL]?: true;
}

/**
 * The channel settings in `value` (a bot's settings, parsed by `schema`), at `at` and below: each
 * field, list item or record value whose schema is a {@link channelSetting}, through optional,
 * default, pipe, lazy and intersection wrappers; in a union, the first form `value` passes.
 */
export function channelsIn(schema: unknown, value: unknown, at: ConfigPath): ChannelEntry[] {
  const found: ChannelEntry[] = [];
  const visit = (node: unknown, v: unknown, path: ConfigPath, depth: number): void => {
    const def = (node as { _zod?: { def?: Def } } | undefined)?._zod?.def;
    if (def === undefined || depth > 32 || v === undefined || v === null) return;
    if (def[CHANNEL]) {
      if (typeof v === "string" || typeof v === "number") found.push({ path, value: v });
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
