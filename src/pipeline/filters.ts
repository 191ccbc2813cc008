/**
 * Declarative filters for `on(type, filter, handler)`. Keys combine with AND; an array value means
 * any of its items (OR). Everything is checked when `on()` is called, so a typo or a filter that
 * can never match the event type fails at startup instead of silently never firing.
 */
import { suggest } from "../errors/did-you-mean.ts";
import { type AnyEvent, isKnownEventType, isTypedEvent, type ServerEvent } from "../wire/events.ts";
import { addressedFilter } from "./addressed.ts";
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

// Where each routing-relevant fact lives in each event type: the topic is `subject` on messages,
// `subject`/`orig_subject` on update_message and `topic` on typing and delete_message; a direct
// message is `type: "private"` on messages but `message_type: "direct"` on typing (the server
// spells the two differently). Other events, and unknown ones, are read by the generic field name.

/** The event, if it is typed (a known type that passed its schema, or bothost's own). */
function typedOf(ctx: RoutableContext): ServerEvent | undefined {
  return isTypedEvent(ctx.event, ctx.eventIssue) ? ctx.event : undefined;
}

/** Any event's fields, for the generic reading. */
const fieldsOf = (event: AnyEvent): Readonly<Record<string, unknown>> => event;

interface ChannelRef {
  ids: number[];
  names: string[];
}

function channelOf(ctx: RoutableContext): ChannelRef | undefined {
  const event = typedOf(ctx);
  switch (event?.type) {
    case "message": {
      const m = event.message;
      if (m.type !== "stream") return undefined;
      return {
        ids: defined([m.stream_id]),
        names: typeof m.display_recipient === "string" ? [m.display_recipient] : [],
      };
    }
    case "update_message":
      if (event.stream_id === undefined) return undefined;
      return { ids: defined([event.stream_id, event.new_stream_id]), names: defined([event.stream_name]) };
    case "delete_message":
    case "typing":
      return event.stream_id === undefined ? undefined : { ids: [event.stream_id], names: [] };
    default: {
      const id = fieldsOf(ctx.event).stream_id;
      return typeof id === "number" ? { ids: [id], names: [] } : undefined;
    }
  }
}

/** The topic(s) an event is about: both old and new topic for a move; none for DMs. */
function topicsOf(ctx: RoutableContext): string[] {
  const event = typedOf(ctx);
  switch (event?.type) {
    case "message":
      return event.message.type === "stream" ? [event.message.subject] : [];
    case "update_message":
      return defined([event.subject, event.orig_subject]);
    case "delete_message":
    case "typing":
      return defined([event.topic]);
    default: {
      const topic = fieldsOf(ctx.event).topic;
      return typeof topic === "string" ? [topic] : [];
    }
  }
}

interface SenderRef {
  ids: number[];
  emails: string[];
}

/** Who caused the event: the sender, editor, reacting or typing user. */
function senderOf(ctx: RoutableContext): SenderRef {
  const event = typedOf(ctx);
  switch (event?.type) {
    case "message":
      return { ids: [event.message.sender_id], emails: [event.message.sender_email] };
    case "update_message":
      return { ids: event.user_id === null ? [] : [event.user_id], emails: [] };
    case "reaction":
      return { ids: [event.user_id], emails: defined([event.user?.email]) };
    case "typing":
      return { ids: [event.sender.user_id], emails: [event.sender.email] };
    case "typing_edit_message":
      return { ids: [event.sender_id], emails: [] };
    default: {
      const id = fieldsOf(ctx.event).sender_id;
      return { ids: typeof id === "number" ? [id] : [], emails: [] };
    }
  }
}

/** `true` for a direct message, `false` for a channel message, `undefined` when neither applies. */
function isDirectEvent(ctx: RoutableContext): boolean | undefined {
  const event = typedOf(ctx);
  switch (event?.type) {
    case "message":
      return event.message.type === "private";
    case "update_message":
      return event.stream_id === undefined;
    case "delete_message":
      return event.message_type === "private";
    case "typing":
      return event.message_type === "direct";
    default:
      return undefined;
  }
}

function flagsOf(ctx: RoutableContext): readonly string[] {
  const flags = fieldsOf(ctx.event).flags;
  return Array.isArray(flags) ? flags.filter((f): f is string => typeof f === "string") : [];
}

function contentOf(ctx: RoutableContext): string | undefined {
  const event = typedOf(ctx);
  if (event?.type === "message") return event.message.content;
  const content = fieldsOf(ctx.event).content;
  return typeof content === "string" ? content : undefined;
}

function opOf(ctx: RoutableContext): string | undefined {
  const op = fieldsOf(ctx.event).op;
  return typeof op === "string" ? op : undefined;
}

function defined<T>(values: Array<T | undefined>): T[] {
  return values.filter((v): v is T => v !== undefined);
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
