/**
 * Settings that name something on the server: a channel (`channelSetting()`) or a user group
 * (`groupSetting()`), by name or id, a user (`userSetting()`), by email or id, or a saved snippet
 * of the bot's (`snippetSetting()`), by its exact title. `bothost check`
 * looks each one a bot's settings give up on the server and reports one the bot cannot see,
 * located in the config; `bothost run` warns of them as the bot starts. A misspelt channel would
 * otherwise fail every send there, or exempt nothing from a rule, a misspelt group would ask
 * nobody, and a misspelt address would tell nobody, unnoticed until it mattered.
 */
import { z } from "zod";
import type { ConfigPath } from "../config/config-problem.ts";
import { walkSchema } from "../errors/schema-walk.ts";

/** What a named setting names on the server. */
export type NamedKind = "channel" | "group" | "user" | "snippet";

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

/**
 * A setting naming a user: their email (real, or the `user{id}@…` one the server shows when
 * emails are hidden; trimmed, not empty) or their id; or, given `schema`, that schema, marked as one.
 *
 * @example
 * ```ts
 * settings: z.object({ notify: z.array(userSetting(z.email())).optional() })
 * ```
 */
export function userSetting(): NameOrId;
export function userSetting<S extends z.ZodType<string | number>>(schema: S): S;
export function userSetting(schema?: z.ZodType): z.ZodType {
  return marked("user", schema);
}

/**
 * A setting naming a saved snippet of the bot's own account, by its exact title (trimmed, 1-60
 * characters); or, given `schema`, that schema, marked as one. Mark only a snippet the bot needs:
 * one it can do without (a greeting with a fallback) is no mistake when missing.
 *
 * @example
 * ```ts
 * settings: z.object({ snippet: snippetSetting() }) // ctx.snippets.get(settings.snippet)
 * ```
 */
export function snippetSetting(): z.ZodString;
export function snippetSetting<S extends z.ZodType<string>>(schema: S): S;
export function snippetSetting(schema?: z.ZodType): z.ZodType {
  return marked("snippet", schema ?? z.string().trim().min(1).max(60));
}

/** A channel, group, user or snippet a bot's settings name, and where (`bots.<name>.settings…`). */
export interface NamedEntry {
  kind: NamedKind;
  path: ConfigPath;
  value: string | number;
}

/**
 * The named settings in `value` (a bot's settings, parsed by `schema`), at `at` and below: each
 * field, list item or record value whose schema is a {@link channelSetting}, a
 * {@link groupSetting}, a {@link userSetting} or a {@link snippetSetting}, wherever it sits (see `walkSchema`).
 */
export function namedIn(schema: unknown, value: unknown, at: ConfigPath): NamedEntry[] {
  const found: NamedEntry[] = [];
  walkSchema(schema, value, at, (_, def, v, path) => {
    const kind = (def as { [NAMES]?: NamedKind })[NAMES];
    if (kind === undefined) return false;
    if (typeof v === "string" || typeof v === "number") found.push({ kind, path, value: v });
    return true;
  });
  return found;
}
