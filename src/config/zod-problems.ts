// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings show users the ${VAR} syntax.
/**
 * zod issues → config problems whose messages say how to fix the value, never showing a secret.
 */
import type { z } from "zod";
import { hasTypoOf, suggest } from "../errors/did-you-mean.ts";
import { keysAt } from "../errors/schema-keys.ts";
import type { ConfigPath, ConfigProblem } from "./config-problem.ts";
import type { ConfigSource } from "./config-source.ts";
import { botNameProblem } from "./schema-fields.ts";
import { isSecretPath, ownWordsOnly } from "./secrets.ts";

type Issue = z.core.$ZodIssue;

const MISSING: Record<string, string> = {
  module: "is missing: add module: ./bots/my-bot.ts (a file relative to this config, or a package name)",
  url: "is missing: add url: https://chat.example.org (or url: sandbox for the embedded test server)",
  listen: "is missing: add listen: 127.0.0.1:8080",
  path: "is missing: add path: /hooks/my-bot",
  token: "is missing: add token: ${MY_BOT_WEBHOOK_TOKEN} (the token the server shows for the bot)",
  bots: "is missing: add a bots: mapping with at least one bot (see config.example.yaml)",
  "redis.name": "is missing: add name: mymaster (the master group the Sentinels monitor)",
  "redis.sentinels": 'is missing: add sentinels: ["10.0.0.1:26379", "10.0.0.2:26379", "10.0.0.3:26379"]',
};

const TYPE_NAMES: Record<string, string> = {
  string: "text",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  object: "a mapping (key: value entries)",
  record: "a mapping (key: value entries)",
  array: "a list",
  tuple: "a list",
};

/**
 * Problems for the issues of one `safeParse` of `root` with `schema` (which lists the keys allowed
 * where an unknown one is found), located in the file; `prefix` is where `root` sits in it.
 */
export function issuesToProblems(
  issues: readonly Issue[],
  root: unknown,
  schema: unknown,
  source: ConfigSource,
  prefix: ConfigPath = [],
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const issue of issues.flatMap(withinUnion)) {
    const path = issue.path as (string | number)[];
    const at = [...prefix, ...path];
    const value = valueAt(root, path);
    if (issue.code === "unrecognized_keys") {
      const known = keysAt(schema, path);
      // A key of the file's top level written in a bot's entry (shutdown_timeout, log…), or the
      // other way round (handler_timeout, retries… at the top level).
      const inBot = prefix.length === 0 && at.length === 2 && at[0] === "bots" && typeof at[1] === "string";
      const atTop = prefix.length === 0 && at.length === 0;
      const topLevel = inBot ? keysAt(schema, []) : [];
      const botKeys = atTop ? keysAt(schema, ["bots", ""]) : [];
      for (const key of issue.keys) {
        const message =
          topLevel.includes(key) && key !== "bots"
            ? DAEMON_KEY_IN_BOT
            : botKeys.includes(key)
              ? BOT_KEY_AT_TOP
              : unknownKey(key, known);
        problems.push(source.problem([...at, key], message, "key"));
      }
    } else if (issue.code === "invalid_key") {
      problems.push(source.problem(at, badRecordKey(at), "key"));
    } else if (value === undefined && ABSENT_CODES.has(issue.code)) {
      // Absent, whatever the schema wanted there: a type, one of a union's forms, an enum's value.
      const key = String(at.at(-1));
      const parent = valueAt(root, path.slice(0, -1));
      if (parent !== null && typeof parent === "object" && hasTypoOf(parent, key)) continue;
      const message = MISSING[`${String(at.at(-2))}.${key}`] ?? MISSING[key] ?? "is missing: add it";
      problems.push(ownWordsOnly(source.problem(at, message)));
    } else {
      const problem = source.problem(at, messageFor(issue, value, at));
      // At a secret field messageFor shows no value; a custom check's text may quote its input.
      problems.push(isSecretPath(at) && issue.code !== "custom" ? ownWordsOnly(problem) : problem);
    }
  }
  return problems;
}

/**
 * A value that fits none of a union's forms (`state.redis`: a URL or a mapping): the issues of the
 * one form of its kind, or one issue saying which kinds would do.
 */
function withinUnion(issue: Issue): Issue[] {
  if (issue.code !== "invalid_union") return [issue];
  if (issue.message !== "Invalid input") {
    // A union with a message of its own (log.pretty) says it best, unless one form alone fits the
    // value's kind and keys (`{ notify_channel: { channel } }`): then what that form misses.
    const keyed = issue.errors.filter((errs) => errs.length > 0 && errs.every((e) => e.path.length > 0));
    if (keyed.length !== 1) return [issue];
    return keyed[0]!.flatMap((e) => withinUnion({ ...e, path: [...issue.path, ...e.path] } as Issue));
  }
  const wrongKind = (errs: readonly Issue[]) =>
    errs.every((e) => e.code === "invalid_type" && e.path.length === 0);
  const fitting = issue.errors.filter((errs) => !wrongKind(errs));
  // Values a form of literals lists are not all the union takes: messageFor names every form.
  if (fitting.length !== 1 || (fitting.length < issue.errors.length && literalsOf(fitting[0]!)))
    return [issue];
  return fitting[0]!.flatMap((e) => withinUnion({ ...e, path: [...issue.path, ...e.path] } as Issue));
}

/** The values a union's form takes when it is literals only (`z.literal`, `z.enum`), else undefined. */
function literalsOf(errs: readonly Issue[]): unknown[] | undefined {
  const only = errs.length > 0 && errs.every((e) => e.code === "invalid_value" && e.path.length === 0);
  return only ? errs.flatMap((e) => (e.code === "invalid_value" ? e.values : [])) : undefined;
}

/** A short text as written (`"lots"`), unless at a secret; else its kind (`text`). */
function shownValue(value: unknown, at: ConfigPath): string {
  return typeof value === "string" && !isSecretPath(at) && value.length <= 40
    ? `"${value}"`
    : describe(value);
}

/** Issues that, at a value that is absent, mean only that it is missing. */
const ABSENT_CODES = new Set<string>(["invalid_type", "invalid_union", "invalid_value"]);

function messageFor(issue: Issue, value: unknown, at: ConfigPath): string {
  if (issue.code === "invalid_union" && issue.message === "Invalid input" && issue.errors.length > 0) {
    const literals = issue.errors.flatMap((errs) => literalsOf(errs) ?? []).map(String);
    const kinds = issue.errors.flatMap((errs) => {
      const first = errs[0];
      if (literalsOf(errs)) return [];
      return first?.code === "invalid_type"
        ? [TYPE_NAMES[first.expected] ?? first.expected]
        : ["another value"];
    });
    if (literals.length > 0) kinds.push(`one of ${literals.join(", ")}`);
    const close = typeof value === "string" ? suggest(value, literals) : undefined;
    return `must be ${kinds.join(" or ")}, not ${shownValue(value, at)}${close !== undefined ? `: did you mean "${close}"?` : ""}`;
  }
  if (issue.code === "invalid_type") {
    const expected = TYPE_NAMES[issue.expected] ?? issue.expected;
    if (value === null) return `is empty: give it a value (${expected})`;
    const quoted =
      typeof value === "string" &&
      (issue.expected === "number" || issue.expected === "int") &&
      value.trim() !== "" &&
      !Number.isNaN(Number(value))
        ? " (remove the quotes)"
        : "";
    return `must be ${expected}, not ${describe(value)}${quoted}`;
  }
  if (issue.code === "invalid_value") {
    const shown =
      typeof value === "string" && !isSecretPath(at) && value.length <= 40 ? `, not "${value}"` : "";
    const close = typeof value === "string" ? suggest(value, issue.values.map(String)) : undefined;
    const hint = close !== undefined ? `: did you mean "${close}"?` : "";
    return `must be one of ${issue.values.map(String).join(", ")}${shown}${hint}`;
  }
  if (issue.code === "invalid_union") return `${issue.message}${unionHint(issue.errors, value)}`;
  // zod's own wording ("Too small: expected number to be >=1") only where the schema gave none.
  if (issue.code === "invalid_format" && issue.format === "url" && issue.message.startsWith("Invalid URL"))
    // The value is not quoted: a URL may carry a token or a password.
    return "is not a URL: write a whole address with its scheme and host (and a port up to 65535), like https://example.org/path";
  if (issue.code === "too_small" && issue.message.startsWith("Too small")) return sizeMessage(issue, "min");
  if (issue.code === "too_big" && issue.message.startsWith("Too big")) return sizeMessage(issue, "max");
  return issue.message;
}

/**
 * For a union with a message of its own: the likely typo of text that misses one of its literals
 * (`reprot` for `report`), or of a mapping's key that misses one its forms require.
 */
function unionHint(errors: readonly (readonly Issue[])[], value: unknown): string {
  const issues = errors.flat();
  let close: string | undefined;
  if (typeof value === "string") {
    const literals = issues.flatMap((e) =>
      e.code === "invalid_value" && e.path.length === 0 ? e.values : [],
    );
    close = suggest(
      value,
      literals.filter((v): v is string => typeof v === "string"),
    );
  } else if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const keys = issues.flatMap((e) =>
      e.code === "invalid_type" && e.path.length === 1 && !Object.hasOwn(value, e.path[0]!)
        ? [String(e.path[0])]
        : [],
    );
    const typo = Object.keys(value).find((key) => !keys.includes(key) && suggest(key, keys) !== undefined);
    close = typo === undefined ? undefined : suggest(typo, keys);
  }
  return close === undefined ? "" : `: did you mean "${close}"?`;
}

/** A number, text or list out of its schema's bounds, said as a bound the user can meet. */
function sizeMessage(
  issue: {
    origin: string;
    inclusive?: boolean;
    exact?: boolean;
    minimum?: number | bigint;
    maximum?: number | bigint;
  },
  side: "min" | "max",
): string {
  const bound = Number(side === "min" ? issue.minimum : issue.maximum);
  const exact = issue.inclusive !== false;
  const how = issue.exact ? "exactly" : side === "min" ? "at least" : "at most";
  if (issue.origin === "string") {
    if (side === "min" && bound <= 1 && !issue.exact) return "is empty: give it some text";
    return `must be ${how} ${bound} characters long`;
  }
  if (issue.origin === "array" || issue.origin === "set") {
    if (side === "min" && bound <= 1 && !issue.exact) return "is an empty list: list at least one";
    return `must list ${how} ${bound}`;
  }
  if (side === "min") return exact ? `must be at least ${bound}` : `must be more than ${bound}`;
  return exact ? `must be at most ${bound}` : `must be less than ${bound}`;
}

/** What a key of the config's top level written in a bot's entry (where it does nothing) is told. */
export const DAEMON_KEY_IN_BOT =
  "is not a bot's setting: it is set for the whole daemon, at the top level of the config";

/** What a bot's key written at the config's top level (where it does nothing) is told. */
export const BOT_KEY_AT_TOP =
  "is not a setting of the whole daemon: it is set for each bot, in its entry under bots";

function unknownKey(key: string, known: readonly string[]): string {
  const close = suggest(key, known);
  if (close !== undefined) return `is not a known key: did you mean "${close}"?`;
  return known.length > 0
    ? `is not a known key: remove it (known keys here: ${known.join(", ")})`
    : "is not a known key: remove it";
}

function badRecordKey(at: ConfigPath): string {
  const name = String(at.at(-1));
  const shown = name.length <= 40 ? `"${name}" ` : "";
  if (at.length === 2 && at[0] === "bots") return botNameProblem(name) ?? `${shown}is not a valid bot name`;
  if (at.length === 4 && at[0] === "bots" && at[2] === "webhooks") {
    return `${shown}is not a webhook name: use the name given to bot.webhook(), up to 64 lower-case letters, digits, _ and -`;
  }
  return `${shown}is not an allowed key here`;
}

/** A wrong value's kind, for messages: never its text, which may be a secret. */
export function describe(value: unknown): string {
  if (value === null) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return "text";
  if (typeof value === "number") {
    if (Number.isNaN(value)) return ".nan";
    if (!Number.isFinite(value)) return "infinity";
    return Number.isInteger(value) ? "a whole number" : "a fractional number";
  }
  if (typeof value === "boolean") return `${value}`;
  return typeof value;
}

function valueAt(root: unknown, at: readonly (string | number)[]): unknown {
  let current = root;
  for (const segment of at) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}
