/**
 * The testing kit's arguments checked before use: a mistake in a test is told in words naming
 * what to change, never as a TypeError from deep inside the kit.
 */
import type { BotDefinition } from "../bot/define-bot.ts";
import { definitionProblems } from "../bot/definition-problems.ts";
import { loadBotModule } from "../bot/load-module.ts";
import { parseDuration } from "../config/duration.ts";
import { ROLE_NAMES, type RoleName } from "../effects/users/roles.ts";
import { BothostError } from "../errors/bothost-error.ts";
import { someOf, suggest } from "../errors/did-you-mean.ts";

/**
 * `bot`, given as a value to `runBot` (or `restart`), when it is a bot; else `MODULE_INVALID`,
 * worded as for a module that exports no bot.
 */
function givenBot<T>(bot: T, where: string): T & BotDefinition<never, never> {
  const problems = definitionProblems(bot, true);
  if (problems.length > 0)
    throw new BothostError("MODULE_INVALID", `${where}: the bot given ${problems.join("; ")}`);
  return bot as T & BotDefinition<never, never>;
}

/** A bot as `runBot` and `restart` take it: its definition, or its module's path from the current directory. */
export async function definitionOf(bot: unknown, name: string, where: string) {
  if (typeof bot !== "string") return givenBot(bot, where);
  const loaded = await loadBotModule(bot, {
    configDir: process.cwd(),
    configDirIs: "the current directory",
    botName: name,
  });
  return loaded.definition;
}

/** A test's mistake in calling the kit (`INVALID_ARGUMENT`). */
export function kitError(message: string): BothostError<"INVALID_ARGUMENT"> {
  return new BothostError("INVALID_ARGUMENT", message);
}

/** A value as a message names it: `the string "12"`, `nothing`, `a Promise`, `an object`. */
export function shown(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (value === null || typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "a list";
  if (value instanceof Promise) return "a Promise (await it first)";
  return typeof value === "object" ? "an object" : typeof value;
}

/** runBot's two arguments, before anything reads them. */
export function checkRunBotArguments(sandbox: unknown, options: unknown): void {
  const isSandbox = (v: unknown) => typeof v === "object" && v !== null && "control" in v && "url" in v;
  if (!isSandbox(sandbox)) {
    // The vitest fixture's runBot takes the options alone: runBot({ bot }) here is that call.
    const fixtureCall = typeof sandbox === "object" && sandbox !== null && "bot" in sandbox;
    throw kitError(
      `runBot: the first argument must be the sandbox startSandbox() returned, got ${shown(sandbox)}: call runBot(sandbox, { bot, … })${fixtureCall ? " (the vitest fixture's runBot is the one that takes the options alone)" : ""}`,
    );
  }
  if (typeof options !== "object" || options === null)
    throw kitError(
      `runBot: the options must be an object, got ${shown(options)}: call runBot(sandbox, { bot, … })`,
    );
  if ((options as { bot?: unknown }).bot === undefined)
    throw kitError("runBot: no bot given: pass { bot }, what defineBot returned or a module path");
  checkRunBotOptions(options as Record<string, unknown>);
}

const RUN_BOT_OPTIONS = [
  "bot",
  "name",
  "email",
  "channels",
  "settings",
  "config",
  "daemon",
  "clock",
  "outgoingWebhook",
  "webhooks",
];

/** runBot's options other than `bot` and `outgoingWebhook` (checked with the bot's start): known, of their types. */
function checkRunBotOptions(options: Record<string, unknown>): void {
  checkKeys(options, RUN_BOT_OPTIONS, "runBot: ", "an option", "it takes");
  const { name, email, channels, config, daemon, webhooks } = options;
  for (const [key, value] of [
    ["name", name],
    ["email", email],
    ["config", config],
    ["daemon", daemon],
  ] as const)
    if (value !== undefined && typeof value !== "string")
      throw kitError(`runBot: ${key} must be a string, got ${shown(value)}`);
  if (channels !== undefined && !(Array.isArray(channels) && channels.every((c) => typeof c === "string")))
    throw kitError(
      `runBot: channels must be a list of channel names, got ${shown(channels)}: channels: ["general"]`,
    );
  if (webhooks !== undefined && typeof webhooks !== "boolean")
    throw kitError(`runBot: webhooks must be true or false, got ${shown(webhooks)}`);
}

/** A message's id where the kit waits on one (`handled`, `progress`). */
export function checkMessageId(id: unknown, where: string): asserts id is number {
  if (typeof id === "number" && Number.isInteger(id)) return;
  const message = typeof id === "object" && id !== null && typeof (id as { id?: unknown }).id === "number";
  const hint = message ? `: give its id, ${where}(message.id)` : "";
  throw kitError(`${where}: the message id must be a number, got ${shown(id)}${hint}`);
}

const TYPES = ["direct", "channel", "private", "stream"];

/** What a person sends (`post`, `ask`), in the shape testing.md documents. */
export function checkInput(input: unknown, where: string): void {
  const shape = `{ type: "direct", to: [emails or ids], content } or { type: "channel", to: "general", topic, content }`;
  if (typeof input !== "object" || input === null)
    throw kitError(`${where}: the message must be ${shape}, got ${shown(input)}`);
  const { type, to, content } = input as Record<string, unknown>;
  if (typeof type !== "string" || !TYPES.includes(type))
    throw kitError(
      `${where}: type must be "direct" or "channel" (or the API's "private" or "stream"), got ${shown(type)}`,
    );
  if (to === undefined) throw kitError(`${where}: to is missing: say who or where, as in ${shape}`);
  if (typeof content !== "string")
    throw kitError(`${where}: content must be a string, got ${shown(content)}`);
}

/** `react`'s message and options: who reacts must be said. */
export function checkReact(message: unknown, options: unknown): void {
  const call = `react(message, emoji, { as: "member@sandbox.example" })`;
  if (typeof options !== "object" || options === null)
    throw kitError(`react: say who reacts, in the options: ${call}`);
  const { as } = options as { as?: unknown };
  if (typeof as !== "string")
    throw kitError(`react: as must be the email of who reacts, got ${shown(as)}: ${call}`);
  const id = typeof message === "object" && message !== null ? (message as { id?: unknown }).id : message;
  if (typeof id !== "number")
    throw kitError(`react: the message must be its id or a message the kit returned, got ${shown(message)}`);
}

/** `clock.advance`'s ms: a number of milliseconds, 0 or more (a duration such as "5m" is named in ms). */
export function checkAdvance(ms: unknown): asserts ms is number {
  if (typeof ms !== "number") {
    const inMs = parseDuration(ms);
    const hint = inMs === undefined ? "" : ` (${JSON.stringify(ms)} is clock.advance(${inMs}))`;
    throw kitError(`advance: ms must be a number of milliseconds, got ${shown(ms)}${hint}`);
  }
  if (!(Number.isFinite(ms) && ms >= 0)) throw kitError(`advance: ms must be 0 or more, not ${ms}`);
}

/** Who posts (`post`, `ask`): an email of the sandbox. */
export function checkFrom(from: unknown, where: string): asserts from is string {
  if (typeof from === "string" && from !== "") return;
  throw kitError(
    `${where}: from must be the email of who posts, got ${shown(from)}: ${where}("member@sandbox.example", { type, to, content })`,
  );
}

/** `email`, who posts or reacts (`what`), is a person of the sandbox's org. */
export function checkAccount(emails: readonly string[], email: string, where: string, what: string): void {
  if (emails.includes(email)) return;
  const meant = suggest(email, emails);
  throw kitError(
    `${where}: ${email} (${what}) has no account in the sandbox${meant ? `: did you mean ${meant}?` : ""} (it has ${someOf(emails)})`,
  );
}

/**
 * The options of a member that waits (`ask`, `nextReply`, `handled`, `progress`): an object of
 * the keys it takes, its `timeoutMs` a number of milliseconds (a duration such as "5s" is named in ms).
 */
export function checkWaitOptions(options: unknown, where: string, keys: readonly string[]): void {
  if (options === undefined) return;
  const takes = `{ ${keys.join(", ")} }`;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    const after =
      where === "nextReply" && typeof options === "number" ? ` (nextReply({ after: ${options} }))` : "";
    throw kitError(`${where}: the options must be an object ${takes}, got ${shown(options)}${after}`);
  }
  const unknown = Object.keys(options).filter((k) => !keys.includes(k));
  if (unknown.length > 0)
    throw kitError(`${where}: ${unknown.join(", ")} is not an option: it takes ${takes}`);
  const { timeoutMs, after, where: accepts } = options as Record<string, unknown>;
  if (
    timeoutMs !== undefined &&
    !(typeof timeoutMs === "number" && Number.isFinite(timeoutMs) && timeoutMs > 0)
  ) {
    const inMs = typeof timeoutMs === "number" ? undefined : parseDuration(timeoutMs);
    const hint = inMs === undefined ? "" : ` (${JSON.stringify(timeoutMs)} is timeoutMs: ${inMs})`;
    throw kitError(
      `${where}: timeoutMs must be a number of milliseconds above 0, got ${shown(timeoutMs)}${hint}`,
    );
  }
  if (after !== undefined && !(typeof after === "number" && Number.isInteger(after))) {
    const message =
      typeof after === "object" && after !== null && typeof (after as { id?: unknown }).id === "number";
    const hint = message ? ": give its id, { after: message.id }" : "";
    throw kitError(`${where}: after must be a message's id, got ${shown(after)}${hint}`);
  }
  if (accepts !== undefined && typeof accepts !== "function")
    throw kitError(
      `${where}: where must be a function of the message, got ${shown(accepts)}: { where: (m) => … }`,
    );
}

/** `webhook`'s request: `{ body, headers, method }`, the headers' values strings. */
export function checkWebhookRequest(request: unknown): void {
  if (request === undefined) return;
  const shape = "{ body, headers, method }";
  if (typeof request !== "object" || request === null || Array.isArray(request))
    throw kitError(`webhook: the request must be ${shape}, got ${shown(request)}`);
  const unknown = Object.keys(request).filter((k) => !["body", "headers", "method"].includes(k));
  if (unknown.length > 0)
    throw kitError(`webhook: ${unknown.join(", ")} is not a field of the request: it takes ${shape}`);
  const { headers, method } = request as Record<string, unknown>;
  if (method !== undefined && (typeof method !== "string" || method === ""))
    throw kitError(`webhook: method must be an HTTP method ("POST", "GET", …), got ${shown(method)}`);
  if (headers === undefined) return;
  if (typeof headers !== "object" || headers === null || Array.isArray(headers))
    throw kitError(`webhook: headers must be an object of names and values, got ${shown(headers)}`);
  for (const [name, value] of Object.entries(headers))
    if (typeof value !== "string")
      throw kitError(`webhook: header ${JSON.stringify(name)} must be a string, got ${shown(value)}`);
}

/** `stop`'s and `restart`'s options: an object of the keys each takes, their flags booleans. */
export function checkStopOptions(options: unknown, where: string, keys: readonly string[]): void {
  if (options === undefined) return;
  const takes = `{ ${keys.join(", ")} }`;
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw kitError(`${where}: the options must be an object ${takes}, got ${shown(options)}`);
  const unknown = Object.keys(options).filter((k) => !keys.includes(k));
  if (unknown.length > 0)
    throw kitError(`${where}: ${unknown.join(", ")} is not an option: it takes ${takes}`);
  for (const flag of ["crash", "wipe"]) {
    const value = (options as Record<string, unknown>)[flag];
    if (value !== undefined && typeof value !== "boolean")
      throw kitError(`${where}: ${flag} must be true or false, got ${shown(value)}`);
  }
}

const BOT_TEST_OPTIONS = ["org", "users", "clock"];
const CLOCK_OPTIONS = ["start", "held"];
const PERSON_FIELDS = ["email", "full_name", "role", "groups", "channels"];

/** A key of `value` that `known` lacks, named with the likeliest one meant. */
function checkKeys(value: object, known: string[], where: string, what: string, takes: string): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const meant = suggest(key, known);
    throw kitError(
      `${where}${key} is not ${what}${meant ? `: did you mean ${meant}?` : ""} (${takes} ${known.join(", ")})`,
    );
  }
}

/** createBotTest's options, the people it adds included, as the test file is collected. */
export function checkBotTestOptions(options: unknown): void {
  if (typeof options !== "object" || options === null)
    throw kitError(
      `createBotTest: the options must be an object { org, users, clock }, got ${shown(options)}`,
    );
  checkKeys(options, BOT_TEST_OPTIONS, "createBotTest: ", "an option", "it takes");
  const { users, clock } = options as Record<string, unknown>;
  if (clock !== undefined) {
    if (typeof clock !== "object" || clock === null)
      throw kitError(`createBotTest: clock must be an object { start, held }, got ${shown(clock)}`);
    checkKeys(clock, CLOCK_OPTIONS, "createBotTest: clock.", "an option of the clock", "it takes");
  }
  if (users === undefined) return;
  if (!Array.isArray(users))
    throw kitError(
      `createBotTest: users must be a list of people, got ${shown(users)}: users: [{ email: "mia@sandbox.example" }]`,
    );
  users.forEach((user: unknown, i) => {
    const at = `createBotTest: users[${i}]`;
    if (typeof user !== "object" || user === null)
      throw kitError(
        `${at} must be a person { email, full_name, role, groups, channels }, got ${shown(user)}`,
      );
    checkKeys(user, PERSON_FIELDS, `${at}.`, "a field of a person", "a person has");
    const { email, full_name, role, groups, channels } = user as Record<string, unknown>;
    if (typeof email !== "string" || !email.includes("@"))
      throw kitError(`${at}.email must be an email, got ${shown(email)}`);
    if (full_name !== undefined && typeof full_name !== "string")
      throw kitError(`${at}.full_name must be a string, got ${shown(full_name)}`);
    if (role !== undefined && !(typeof role === "string" && ROLE_NAMES.includes(role as RoleName))) {
      const meant = typeof role === "string" ? suggest(role, ROLE_NAMES) : undefined;
      throw kitError(
        `${at}.role must be one of ${ROLE_NAMES.join(", ")}, got ${shown(role)}${meant ? `: did you mean ${meant}?` : ""}`,
      );
    }
    for (const [key, list] of [
      ["groups", groups],
      ["channels", channels],
    ] as const)
      if (list !== undefined && !(Array.isArray(list) && list.every((name) => typeof name === "string")))
        throw kitError(`${at}.${key} must be a list of names, got ${shown(list)}`);
  });
}
