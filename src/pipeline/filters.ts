/**
 * Declarative filters for `on(type, filter, handler)`. Keys combine with AND; an array value means
 * any of its items (OR). Everything is checked when `on()` is called, so a typo or a filter that
 * can never match the event type fails at startup instead of silently never firing.
 */
import { suggest } from "../errors/did-you-mean.ts";
import { isKnownEventType } from "../wire/events.ts";
import { addressedFilter } from "./addressed.ts";
import { channelOf, contentOf, flagsOf, isDirectEvent, opOf, senderOf, topicsOf } from "./filter-fields.ts";
import type { RoutableContext } from "./routable-context.ts";
import { RouterError } from "./router-error.ts";

/** A filter function; it may be async. */
export type FilterPredicate<C> = (ctx: C) => boolean | Promise<boolean>;

type OneOrMany<T> = T | readonly T[];

/**
 * What an event must look like to reach a handler. See the filter table in docs/guide/writing-bots.md.
 *
 * @example
 * ```ts
 * bot.on("message", { channel: ["support", 42], topic: /^ticket-\d+$/, mentioned: true }, handler);
 * bot.on("reaction", { op: "add", when: (ctx) => ctx.event.emoji_name === "tada" }, handler);
 * ```
 */
export interface Filter<C = RoutableContext> {
  /** The event's `op` (reaction, typing, subscription, …). */
  op?: OneOrMany<string>;
  /** Channel name (case-insensitive) or id. */
  channel?: OneOrMany<string | number>;
  /** Topic: a string matches exactly but case-insensitively; a RegExp is tested as is. */
  topic?: OneOrMany<string | RegExp>;
  /** User id or email (case-insensitive) of the sender, editor, reacting or typing user. */
  sender?: OneOrMany<number | string>;
  /** `true`: direct messages only; `false`: channel messages only. */
  direct?: boolean;
  /** `true`: the bot is mentioned (personally, by a group, or by a wildcard); `false`: it is not. */
  mentioned?: boolean;
  /** Message content: a string matches as a case-insensitive substring; a RegExp is tested as is. */
  contains?: OneOrMany<string | RegExp>;
  /** `true`: a one-to-one DM to the bot or a mention of it by name (`{ wildcards: true }`: or `@**all**`). */
  addressed?: boolean | { wildcards: boolean };
  /** Any further test, run last (only when the declarative keys matched). */
  when?: FilterPredicate<C>;
}

type FilterKey = keyof Filter;
const KEYS: readonly FilterKey[] = [
  "op",
  "channel",
  "topic",
  "sender",
  "direct",
  "mentioned",
  "contains",
  "addressed",
  "when",
];

const MESSAGE_LIKE = ["message", "update_message", "delete_message", "typing"];
/** Known event types each key can match, and why it cannot match the others. */
const APPLIES: Partial<Record<FilterKey, { types: readonly string[]; missing: string }>> = {
  channel: { types: MESSAGE_LIKE, missing: "carry no channel" },
  topic: { types: MESSAGE_LIKE, missing: "carry no topic" },
  direct: { types: MESSAGE_LIKE, missing: "are neither direct nor channel messages" },
  sender: {
    types: ["message", "update_message", "reaction", "typing", "typing_edit_message"],
    missing: "carry no sender",
  },
  mentioned: { types: ["message", "update_message"], missing: "carry no message flags" },
  contains: { types: ["message", "update_message"], missing: "carry no message content" },
  addressed: { types: ["message"], missing: "are not messages" },
};
const WITHOUT_OP = new Set([
  "message",
  "update_message",
  "delete_message",
  "heartbeat",
  "restart",
  "alert_words",
]);
const MENTION_FLAGS = [
  "mentioned",
  "stream_wildcard_mentioned",
  "topic_wildcard_mentioned",
  "wildcard_mentioned",
];

type Test<C> = (ctx: C) => boolean;

/**
 * Check `filter` for routes of `types` and turn it into one predicate.
 * `where` names the call in error messages, e.g. `on("message")`.
 */
export function compileFilter<C extends RoutableContext>(
  filter: Filter<C> | FilterPredicate<C>,
  types: readonly string[],
  where: string,
): FilterPredicate<C> {
  if (typeof filter === "function") return filter;
  if (typeof filter !== "object" || filter === null || Array.isArray(filter) || filter instanceof RegExp) {
    throw invalid(
      where,
      `the filter must be an object such as { channel: "general" } or a function (ctx) => boolean, got ${show(filter)}.`,
    );
  }
  const tests: Test<C>[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (!KEYS.includes(key as FilterKey)) {
      const hint = suggest(key, KEYS);
      throw invalid(
        where,
        `unknown filter key "${key}".${hint ? ` Did you mean "${hint}"?` : ""} Valid keys: ${KEYS.join(", ")}.`,
      );
    }
    if (value === undefined || key === "when") continue;
    checkApplies(key as FilterKey, types, where);
    if (key === "sender") checkSenderEmails(value, types, where);
    tests.push(compileKey<C>(key as FilterKey, value, where));
  }
  const when = filter.when;
  if (when !== undefined && typeof when !== "function") {
    throw invalid(where, `filter "when" must be a function (ctx) => boolean, got ${show(when)}.`);
  }
  return (ctx) => {
    for (const test of tests) if (!test(ctx)) return false;
    return when ? when(ctx) : true;
  };
}

function compileKey<C extends RoutableContext>(key: FilterKey, value: unknown, where: string): Test<C> {
  switch (key) {
    case "op": {
      const ops = list<string>(value, key, where, 'an op such as "add"', isName);
      return (ctx) => ops.includes(opOf(ctx) as string);
    }
    case "channel": {
      const { ids, names } = idsAndNames(value, key, where, "a channel name or id", isChannel);
      return (ctx) => {
        const ref = channelOf(ctx);
        if (ref === undefined) return false;
        if (ref.ids.some((id) => ids.includes(id))) return true;
        if (names.length === 0) return false;
        const known = ref.names.length > 0 ? ref.names : ref.ids.map((id) => ctx.channelName?.(id));
        return known.some((n) => n !== undefined && names.includes(n.toLowerCase()));
      };
    }
    case "topic": {
      const match = textMatcher(value, key, where, "exact");
      return (ctx) => topicsOf(ctx).some(match);
    }
    case "contains": {
      const match = textMatcher(value, key, where, "substring");
      return (ctx) => {
        const content = contentOf(ctx);
        return content !== undefined && match(content);
      };
    }
    case "sender": {
      const { ids, names: emails } = idsAndNames(value, key, where, "a user id or email", isSender);
      return (ctx) => {
        const who = senderOf(ctx);
        return (
          who.ids.some((id) => ids.includes(id)) || who.emails.some((e) => emails.includes(e.toLowerCase()))
        );
      };
    }
    case "direct": {
      const want = bool(value, key, where);
      return (ctx) => isDirectEvent(ctx) === want;
    }
    case "mentioned": {
      const want = bool(value, key, where);
      return (ctx) => flagsOf(ctx).some((f) => MENTION_FLAGS.includes(f)) === want;
    }
    case "addressed": {
      const test = addressedFilter(value);
      if (test) return test;
      throw invalid(
        where,
        `filter "addressed" must be true, false or { wildcards: true }; got ${show(value)}.`,
      );
    }
    default:
      throw new Error(`unreachable filter key ${key}`);
  }
}

function checkApplies(key: FilterKey, types: readonly string[], where: string): void {
  for (const type of types) {
    if (!isKnownEventType(type)) continue; // "*" and unknown types: fields are checked per event
    const rule = APPLIES[key];
    const fits = key === "op" ? !WITHOUT_OP.has(type) : rule === undefined || rule.types.includes(type);
    if (!fits) {
      const why = key === "op" ? "have no op" : rule?.missing;
      throw invalid(
        where,
        `filter "${key}" can never match "${type}" events (they ${why}). Remove it, or route those types separately.`,
      );
    }
  }
}

/** Events that name who made them by user id alone: an email in `sender` never matches them. */
const SENDER_ID_ONLY = ["update_message", "typing_edit_message"];

function checkSenderEmails(value: unknown, types: readonly string[], where: string): void {
  const email = (Array.isArray(value) ? value : [value]).find((v) => typeof v === "string");
  const type = types.find((t) => SENDER_ID_ONLY.includes(t));
  if (email === undefined || type === undefined) return;
  throw invalid(
    where,
    `filter "sender" can never match "${type}" events by email (${show(email)}): they name the user by id alone. Give the user's id.`,
  );
}

function textMatcher(value: unknown, key: FilterKey, where: string, mode: "exact" | "substring") {
  const isText = (v: unknown) => typeof v === "string" || v instanceof RegExp;
  const items = list<string | RegExp>(value, key, where, "a string or a RegExp", isText);
  const tests = items.map((item): ((text: string) => boolean) => {
    if (item instanceof RegExp) {
      return (text) => {
        item.lastIndex = 0; // a /g or /y RegExp keeps state between tests; start fresh each time
        return item.test(text);
      };
    }
    const lower = item.toLowerCase();
    return mode === "exact"
      ? (text) => text.toLowerCase() === lower
      : (text) => text.toLowerCase().includes(lower);
  });
  return (text: string) => tests.some((test) => test(text));
}

// Checks for filter values: each names the key and the `on()` call, so a bad filter fails at
// setup with a message that says what to change.

function list<T>(value: unknown, key: string, where: string, what: string, ok: (v: unknown) => boolean): T[] {
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0) {
    throw invalid(
      where,
      `filter "${key}" is an empty array, which never matches; list at least one value or remove the key.`,
    );
  }
  for (const item of items) {
    if (!ok(item)) {
      throw invalid(where, `filter "${key}" must be ${what}, or an array of them; got ${show(item)}.`);
    }
  }
  return items as T[];
}

/** Checked as ids and names (lower-cased), for `channel` and `sender`. */
function idsAndNames(value: unknown, key: string, where: string, what: string, ok: (v: unknown) => boolean) {
  const wanted = list<number | string>(value, key, where, what, ok);
  return {
    ids: wanted.filter((v): v is number => typeof v === "number"),
    names: wanted.filter((v): v is string => typeof v === "string").map((n) => n.toLowerCase()),
  };
}

const isName = (v: unknown) => typeof v === "string" && v !== "";
const isChannel = (v: unknown) => isName(v) || isId(v);
const isSender = (v: unknown) => isId(v) || (typeof v === "string" && v.includes("@"));

function bool(value: unknown, key: string, where: string): boolean {
  if (typeof value !== "boolean")
    throw invalid(where, `filter "${key}" must be true or false, got ${show(value)}.`);
  return value;
}

function isId(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v > 0;
}

function show(v: unknown): string {
  if (typeof v === "function") return "a function";
  if (v instanceof RegExp) return String(v);
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return "an array";
  return v === null ? "null" : typeof v === "object" ? "an object" : String(v);
}

function invalid(where: string, message: string): RouterError {
  return new RouterError("ROUTER_INVALID_FILTER", `${where}: ${message}`);
}
