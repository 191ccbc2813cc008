/**
 * How keys and values are encoded, shared by the embedded and the Redis store.
 *
 * A stored key is the path of namespace names and then the key, each segment escaped so it never
 * contains "/", joined with "/": namespace `a`, key `b/c` → `a/b%2Fc`. So a key can never be
 * mistaken for a child namespace's key, and a view's own keys are exactly the stored keys under
 * its prefix with no further "/". Only "%" and "/" are escaped, so keys stay readable on disk.
 */
import { StateError } from "./state-error.ts";
import type { JsonValue, SetOptions, StateEntry } from "./state-store.ts";

const MAX_KEY_LENGTH = 1024;

/** A Redis key prefix: letters, digits and `_ . -`, which need no escaping anywhere. */
export const REDIS_PREFIX = /^[A-Za-z0-9_.-]{1,64}$/;

function escapeSegment(segment: string): string {
  return segment.replaceAll("%", "%25").replaceAll("/", "%2F");
}

function unescapeSegment(segment: string): string {
  return segment.includes("%") ? segment.replaceAll("%2F", "/").replaceAll("%25", "%") : segment;
}

/** Throws `STATE_INVALID_KEY` unless `key` is a non-empty string of at most 1024 characters. */
export function checkKey(key: unknown, what: "key" | "namespace" | "prefix" = "key"): string {
  if (typeof key !== "string") {
    throw new StateError("STATE_INVALID_KEY", `State ${what} must be a string, got ${typeof key}.`);
  }
  if (what !== "prefix" && key.length === 0) {
    throw new StateError("STATE_INVALID_KEY", `State ${what} must not be empty.`);
  }
  if (key.length > MAX_KEY_LENGTH) {
    throw new StateError(
      "STATE_INVALID_KEY",
      `State ${what} "${key.slice(0, 40)}…" is ${key.length} characters; the limit is ${MAX_KEY_LENGTH}. Hash long identifiers before using them as keys.`,
    );
  }
  return key;
}

/**
 * What a view of the embedded and of the Redis store share: its path (the stored-key prefix of
 * its namespace) and the lifecycle of its root store.
 */
export abstract class KeyedView {
  constructor(
    protected readonly path: string,
    /** Shared by a root store and all its views: once closed, every view refuses work. */
    protected readonly lifecycle: { closed: boolean; description: string },
  ) {}

  protected checkOpen(): void {
    if (this.lifecycle.closed) {
      throw new StateError(
        "STATE_CLOSED",
        `The state store (${this.lifecycle.description}) is closed; open it again before use.`,
      );
    }
  }

  /** The stored key of `key` in this view (or, for "prefix", where `list(key)` starts). */
  protected stored(key: string, what: "key" | "prefix" = "key"): string {
    this.checkOpen();
    return this.path + escapeSegment(checkKey(key, what));
  }

  /** The key a stored key under this view has in it; undefined for a child namespace's key. */
  protected ownKey(storedKey: string): string | undefined {
    const rest = storedKey.slice(this.path.length);
    return rest.includes("/") ? undefined : unescapeSegment(rest);
  }

  /** The stored-key prefix of the child namespace `name`. */
  protected childPrefix(name: string): string {
    return `${this.path}${escapeSegment(checkKey(name, "namespace"))}/`;
  }
}

/** `options.ttlMs`, or throws `STATE_INVALID_VALUE` unless it is a positive number. */
export function checkTtl(options: SetOptions | undefined): number | undefined {
  const ttlMs = options?.ttlMs;
  if (ttlMs !== undefined && (typeof ttlMs !== "number" || !Number.isFinite(ttlMs) || ttlMs <= 0)) {
    throw new StateError(
      "STATE_INVALID_VALUE",
      `ttlMs must be a positive number of milliseconds, got ${String(ttlMs)}.`,
    );
  }
  return ttlMs;
}

export function byKey(a: StateEntry, b: StateEntry): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * Serialize `value` for key `key`, or throw `STATE_INVALID_VALUE` naming the offending path:
 * anything `JSON.parse(JSON.stringify(v))` would not give back unchanged (`undefined` in objects,
 * `NaN`, a `Date`, a `Map`) is refused instead of being silently altered.
 */
export function toJsonText(key: string, value: unknown): string {
  const problem = findProblem(value, new Set());
  if (problem) {
    throw new StateError(
      "STATE_INVALID_VALUE",
      `Cannot store key "${key}": value${problem.path.reverse().join("")} ${problem.reason}. Store plain JSON (objects, arrays, strings, finite numbers, booleans, null).`,
    );
  }
  return JSON.stringify(value);
}

export function fromJsonText(text: string): JsonValue {
  return JSON.parse(text) as JsonValue;
}

/**
 * The first part of `value` that JSON would not give back unchanged. The path's segments
 * (`.key`, `[index]`) are collected innermost first on the way out, so a value without a problem,
 * which is every value on a bot's hot path, allocates no path strings.
 */
function findProblem(value: unknown, parents: Set<object>): { path: string[]; reason: string } | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : { path: [], reason: `is ${value} (not finite)` };
    case "object":
      break;
    default:
      return { path: [], reason: `is ${typeof value}` };
  }
  if (value === null) return undefined;
  if (parents.has(value)) return { path: [], reason: "is a circular reference" };
  parents.add(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const problem = findProblem(value[i], parents);
        if (problem) return within(problem, `[${i}]`);
      }
      return undefined;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      const name = (value as object).constructor?.name ?? "object";
      return { path: [], reason: `is a ${name}, not a plain object (convert it, e.g. date.toISOString())` };
    }
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      const problem = findProblem((value as Record<string, unknown>)[k], parents);
      if (problem) return within(problem, `.${k}`);
    }
    return undefined;
  } finally {
    parents.delete(value);
  }
}

function within(problem: { path: string[]; reason: string }, segment: string) {
  problem.path.push(segment);
  return problem;
}
