/**
 * The check of a `bot.webhook(name, options, handler)` call, made when setup calls it: a wrong
 * name, handler or option stops the bot's setup (`BOT_SETUP_INVALID`, so `bothost check` and the
 * start refuse it) instead of failing every request later with a 500 its sender retries forever.
 * A message names the field and what it got (its kind), never a secret's value.
 */

import { WEBHOOK_NAME } from "../config/schema-fields.ts";
import { suggest } from "../errors/did-you-mean.ts";
import type { WebhookOptions, WebhookVerify } from "../webhook/webhook-runtime.ts";
import { BotSetupError } from "./setup-error.ts";

const OPTIONS = ["verify", "idempotencyHeader", "idempotencyKey", "maxBodyBytes", "objectBody"];

/** The fields each `verify` type takes, besides `type`: required first (the secret), then optional. */
const VERIFIERS: Record<WebhookVerify["type"], { required?: string; optional: string[] }> = {
  github: { required: "secret", optional: [] },
  hmac: { required: "secret", optional: ["header", "timestampHeader", "toleranceSeconds"] },
  slack: { required: "secret", optional: ["toleranceSeconds"] },
  bearer: { required: "token", optional: [] },
  secret: { required: "secret", optional: ["header"] },
  none: { optional: [] },
};

/** The longest `toleranceSeconds`: a day. */
const MAX_TOLERANCE_SECONDS = 86_400;

/** An HTTP header name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** What `value` is, for a message: its kind, never its content (it may be a secret). */
function kindOf(value: unknown): string {
  if (value === undefined) return "nothing (undefined: a setting not set?)";
  if (value === null) return "null";
  if (value === "") return "an empty string";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

/**
 * A key of `object` with a value that is not among `known` (a typo, or a field of another type),
 * as a problem naming it as a `what` ("field", "option").
 */
function unknownKey(
  object: object,
  known: readonly string[],
  where: string,
  what: string,
): string | undefined {
  const key = Object.keys(object).find(
    (k) => !known.includes(k) && (object as Record<string, unknown>)[k] !== undefined,
  );
  if (key === undefined) return undefined;
  const hint = suggest(key, known);
  return `${where}: unknown ${what} "${key}".${hint ? ` Did you mean "${hint}"?` : ""} Valid: ${known.join(", ")}.`;
}

/** What is wrong with an optional header name at `where`, or `undefined`. */
function headerProblem(value: unknown, where: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !HEADER_NAME.test(value))
    return `${where} must be a header name such as "X-Signature" (letters, digits, "-"); got ${typeof value === "string" && value !== "" ? "a string that is no header name" : kindOf(value)}.`;
  return undefined;
}

/** What is wrong with a `verify` option at `where` (`bot.webhook("x").verify`), or `undefined`. */
function verifyProblem(verify: unknown, where: string): string | undefined {
  if (verify === undefined)
    return `${where} is required: how requests are authenticated, e.g. { type: "bearer", token } ({ type: "none" } to accept any request).`;
  if (typeof verify !== "object" || verify === null || Array.isArray(verify))
    return `${where} must be an object { type, … }; got ${kindOf(verify)}.`;
  const v = verify as Record<string, unknown>;
  const types = Object.keys(VERIFIERS);
  if (typeof v.type !== "string" || !types.includes(v.type)) {
    const known = `one of ${types.map((t) => `"${t}"`).join(", ")}`;
    // A word is shown (a typo, with the type meant); anything else by its kind, in case a secret
    // landed there.
    if (typeof v.type !== "string" || !/^[\w-]{1,24}$/.test(v.type))
      return `${where}.type must be ${known}; got ${typeof v.type === "string" && v.type !== "" ? "a string that is no verifier" : kindOf(v.type)}.`;
    const hint = suggest(v.type, types);
    return `${where}.type "${v.type}" is not a verifier.${hint ? ` Did you mean "${hint}"?` : ""} Use ${known}.`;
  }
  const { required, optional } = VERIFIERS[v.type as WebhookVerify["type"]];
  const fields = ["type", ...(required ? [required] : []), ...optional];
  const unknown = unknownKey(v, fields, `${where} (type "${v.type}")`, "field");
  if (unknown) return unknown;
  if (required) {
    const secret = v[required];
    const at = `${where}.${required}`;
    if (typeof secret !== "string" || secret === "")
      return `${at} is required for type "${v.type}": a non-empty string; got ${kindOf(secret)}.`;
    if (v.type === "bearer" && /\s/.test(secret))
      return `${at} holds whitespace, which an "Authorization: Bearer" header cannot carry: every request would be refused.`;
    if (v.type === "secret" && secret.trim() !== secret)
      return `${at} begins or ends with whitespace, which a header's value cannot: every request would be refused.`;
  }
  const header =
    headerProblem(v.header, `${where}.header`) ??
    headerProblem(v.timestampHeader, `${where}.timestampHeader`);
  if (header) return header;
  const tolerance = v.toleranceSeconds;
  if (
    tolerance !== undefined &&
    (typeof tolerance !== "number" ||
      !Number.isInteger(tolerance) ||
      tolerance < 1 ||
      tolerance > MAX_TOLERANCE_SECONDS)
  )
    return `${where}.toleranceSeconds must be a whole number of seconds from 1 to ${MAX_TOLERANCE_SECONDS}; got ${typeof tolerance === "number" ? tolerance : kindOf(tolerance)}.`;
  return undefined;
}

/** What is wrong with the options of `bot.webhook(name, options, handler)` (`where`), or `undefined`. */
function optionsProblem(options: unknown, where: string): string | undefined {
  if (typeof options !== "object" || options === null || Array.isArray(options))
    return `${where}: the options must be an object { verify: … }; got ${kindOf(options)}.`;
  const unknown = unknownKey(options, OPTIONS, where, "option");
  if (unknown) return unknown;
  const o = options as Record<string, unknown>;
  const verify = verifyProblem(o.verify, `${where}.verify`);
  if (verify) return verify;
  const header = headerProblem(o.idempotencyHeader, `${where}.idempotencyHeader`);
  if (header) return header;
  const limit = o.maxBodyBytes;
  if (limit !== undefined && (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1))
    return `${where}.maxBodyBytes must be a whole number of bytes, at least 1; got ${typeof limit === "number" ? limit : kindOf(limit)}.`;
  if (o.objectBody !== undefined && typeof o.objectBody !== "boolean")
    return `${where}.objectBody must be true or false; got ${kindOf(o.objectBody)}.`;
  const readsKey = o.idempotencyKey;
  if (readsKey !== undefined && typeof readsKey !== "function")
    return `${where}: idempotencyKey must be a function (request) => string | undefined that reads the key from the request.`;
  if (readsKey !== undefined && o.idempotencyHeader !== undefined)
    return `${where}: declare idempotencyHeader or idempotencyKey, not both (idempotencyKey gets the request's headers too, to read a header first).`;
  return undefined;
}

/**
 * Check a `bot.webhook(name, options, handler)` call; `taken`: the names declared already. Returns
 * the options to keep (a copy: a later change to the caller's object does not skip this check);
 * throws {@link BotSetupError} naming the call and the field.
 */
export function checkWebhook(
  name: unknown,
  options: unknown,
  handler: unknown,
  taken: { has(name: string): boolean },
): WebhookOptions {
  if (typeof name !== "string" || !WEBHOOK_NAME.test(name)) {
    throw new BotSetupError(
      `bot.webhook(${JSON.stringify(name) ?? String(name)}): the name must be 1-64 lowercase letters, digits, "_" or "-".`,
    );
  }
  const where = `bot.webhook("${name}")`;
  if (taken.has(name)) throw new BotSetupError(`${where}: a webhook with this name exists already.`);
  if (typeof options === "function") {
    throw new BotSetupError(
      `${where}: the second argument is a function where the options were expected; a webhook needs { verify: … } before its handler ({ verify: { type: "none" } } to accept any request).`,
    );
  }
  if (typeof handler !== "function") throw new BotSetupError(`${where}: the handler must be a function.`);
  const problem = optionsProblem(options, where);
  if (problem) throw new BotSetupError(problem);
  const o = options as WebhookOptions;
  return { ...o, verify: { ...o.verify } };
}
