/**
 * How namespaced keys become flat stored keys.
 *
 * A stored key is the path of namespace names and then the key, each segment escaped so that it
 * never contains "/", joined with "/": namespace `a`, key `b/c` → `a/b%2Fc`. Because no escaped
 * segment contains "/", a key can never be mistaken for a child namespace's key (or a parent's),
 * whatever characters it has, and a view's own keys are exactly the stored keys under its prefix
 * with no further "/". The escape maps "%" and "/" only, so keys stay readable on disk and in a
 * Redis monitor.
 */
import { StateError } from "./state-error.ts";

export const MAX_KEY_LENGTH = 1024;

/** A Redis key prefix: letters, digits and `_ . -`, which need no escaping anywhere. */
export const REDIS_PREFIX = /^[A-Za-z0-9_.-]{1,64}$/;

export function escapeSegment(segment: string): string {
  return segment.replaceAll("%", "%25").replaceAll("/", "%2F");
}

export function unescapeSegment(segment: string): string {
  return segment.replaceAll("%2F", "/").replaceAll("%25", "%");
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

/** The stored-key prefix of a child namespace `name` inside a view whose prefix is `prefix`. */
export function childPrefix(prefix: string, name: string): string {
  return `${prefix}${escapeSegment(checkKey(name, "namespace"))}/`;
}
