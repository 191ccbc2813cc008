/**
 * The config's field types that need more than a zod primitive: each says how to fix a bad value.
 */
import { z } from "zod";
import { suggest } from "../errors/did-you-mean.ts";
import { eventSchemas, isKnownEventType, type KnownEventType } from "../wire/events.ts";
import { parseDuration, UNIT_MS } from "./duration.ts";

/** Bot names: lower-case letters, digits, `_` and `-`, starting with a letter or digit. */
export const BOT_NAME = /^[a-z0-9][a-z0-9_-]*$/;

/** What is wrong with bot name `name` (`"Bad!" is not a valid bot name: …`), or undefined. */
export function botNameProblem(name: string): string | undefined {
  if (BOT_NAME.test(name) && name.length <= 64) return undefined;
  const shown = name.length <= 40 ? `"${name}" ` : "";
  return `${shown}is not a valid bot name: use up to 64 lower-case letters, digits, _ and -, starting with a letter or digit (like moderator or help-bot)`;
}

/** Inbound webhook names (`bot.webhook(name, …)`): as bot names, at most 64 characters. */
export const WEBHOOK_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Reports `message` about `input` from a transform; returns z.NEVER. */
function invalid(ctx: z.core.$RefinementCtx, input: unknown, message: string): never {
  ctx.issues.push({ code: "custom", input, message });
  return z.NEVER;
}

/** A duration (`"30s"`, `"1h30m"`, `"250ms"`, or milliseconds as a number) → milliseconds. */
export function duration(options: { min?: number; max?: number } = {}) {
  const { min = 0, max = Number.POSITIVE_INFINITY } = options;
  return z.unknown().transform((value, ctx): number => {
    if (typeof value === "number" && value < 0) {
      return invalid(ctx, value, `is negative: give a duration like "30s"${min === 0 ? ", or 0" : ""}`);
    }
    const ms = parseDuration(value);
    if (ms === undefined) {
      return invalid(
        ctx,
        value,
        'is not a duration: write a number with a unit, like "30s", "5m", "24h" or "1h30m" (units ms, s, m, h, d), or a number of milliseconds',
      );
    }
    if (ms < min) return invalid(ctx, value, `is too short: use at least ${durationText(min)}`);
    return ms > max ? invalid(ctx, value, `is too long: use at most ${durationText(max)}`) : ms;
  });
}

/** `ms` in its largest whole unit: "3d", "1h", "30s", or "250 ms". */
function durationText(ms: number): string {
  for (const unit of ["d", "h", "m", "s"]) {
    const size = UNIT_MS[unit]!;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms} ms`;
}

/** A server URL (`https://…`, normalised without a trailing slash) or `"sandbox"`. */
export const ServerUrl = z.string().transform((text, ctx): string => {
  if (text === "sandbox") return text;
  const problem = urlProblem(text);
  if (problem !== undefined) return invalid(ctx, text, problem);
  const url = new URL(text);
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
});

function urlProblem(text: string): string | undefined {
  if (!URL.canParse(text)) {
    return 'is not a URL: write the server\'s address, like https://chat.example.org, or "sandbox" for the embedded test server';
  }
  const url = new URL(text);
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return `uses ${url.protocol.replace(/:$/, "")}://: use https:// (or http:// for a server on your own machine)`;
  }
  if (url.username !== "" || url.password !== "") {
    return "contains a user name or password: remove them; each bot signs in with its own email and API key";
  }
  if (url.search !== "" || url.hash !== "") return "has a query (?…) or fragment (#…): remove it";
  if (/\/api(\/v1)?\/?$/.test(url.pathname))
    return "ends with /api: give the server's base URL; bothost adds /api/v1 itself";
  return undefined;
}

const PORT_RANGE = { error: "must be between 0 and 65535 (0 picks a free port)" };
/** A TCP port number; 0 picks a free one. */
export const Port = z.number().int().min(0, PORT_RANGE).max(65535, PORT_RANGE);

/** `host:port`, e.g. `127.0.0.1:8080` or `[::1]:8080`. */
export const ListenAddress = z.string().refine((text) => parseListenAddress(text) !== undefined, {
  error: 'is not host:port: write it like "127.0.0.1:8080" (or "[::1]:8080", "0.0.0.0:8080")',
});

/**
 * Splits a validated `listen` value into host and port.
 */
export function parseListenAddress(text: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(text);
  if (!match) return undefined;
  const port = Number(match[3]);
  return port <= 65535 ? { host: (match[1] ?? match[2])!, port } : undefined;
}

/** An email address, loosely: servers accept more forms than any strict pattern. */
export const Email = z.string().regex(/^[^\s@]+@[^\s@]+$/, {
  error: "is not an email address: write the bot's email, like moderation-bot@chat.example.org",
});

/** An event type the server can queue (see src/wire/events.ts). */
export const EventTypeName = z.string().transform((name, ctx): KnownEventType => {
  if (isKnownEventType(name)) return name;
  const close = suggest(name, Object.keys(eventSchemas));
  return invalid(
    ctx,
    name,
    close
      ? `"${name}" is not an event type: did you mean "${close}"?`
      : `"${name}" is not an event type: use one of ${Object.keys(eventSchemas).join(", ")}`,
  );
});

const NARROW_OPERATORS = ["channel", "stream", "topic", "sender", "is"];

/** A register narrow: a list of `[operator, operand]` pairs of strings. */
export const Narrow = z.unknown().transform((value, ctx): (readonly [string, string])[] => {
  const example = "like [[channel, general], [topic, help]]";
  if (!Array.isArray(value))
    return invalid(ctx, value, `must be a list of [operator, operand] pairs, ${example}`);
  // One pair without the list around it (`narrow: [channel, general]`): each of its strings would
  // be told it is no pair, although the pair itself is right.
  const [operator, operand] = value as unknown[];
  if (value.length === 2 && typeof operator === "string" && typeof operand === "string")
    if (NARROW_OPERATORS.includes(operator))
      return invalid(ctx, value, `is one pair, not a list of pairs: write [[${operator}, ${operand}]]`);
  const pairs: (readonly [string, string])[] = [];
  value.forEach((item: unknown, i) => {
    const problem = narrowItemProblem(item);
    if (problem) ctx.issues.push({ code: "custom", input: item, path: [i], message: problem });
    else pairs.push(item as [string, string]);
  });
  return pairs;
});

function narrowItemProblem(item: unknown): string | undefined {
  if (!Array.isArray(item) || item.length !== 2 || !item.every((part) => typeof part === "string")) {
    return "must be a pair of text values [operator, operand], like [channel, general]";
  }
  const [operator, operand] = item as [string, string];
  if (!NARROW_OPERATORS.includes(operator)) {
    const close = suggest(operator, NARROW_OPERATORS);
    const hint = close ? `did you mean "${close}"? ` : "";
    return `"${operator}" is not an operator the server accepts in a queue narrow: ${hint}use one of ${NARROW_OPERATORS.join(", ")}`;
  }
  if (operator === "is" && operand === "followed") {
    return "[is, followed] is not accepted by the server in a queue narrow: narrow by channel or topic instead";
  }
  return undefined;
}
