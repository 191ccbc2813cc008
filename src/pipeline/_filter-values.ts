/**
 * Checks for filter values: each names the filter key and the `on()` call in its message, so a
 * bad filter fails at setup with a message that says what to change.
 */
import { RouterError } from "./router-error.ts";

export function list<T>(
  value: unknown,
  key: string,
  where: string,
  what: string,
  ok: (v: unknown) => boolean,
): T[] {
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

export function bool(value: unknown, key: string, where: string): boolean {
  if (typeof value !== "boolean")
    throw invalid(where, `filter "${key}" must be true or false, got ${show(value)}.`);
  return value;
}

export function isId(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v > 0;
}

export function show(v: unknown): string {
  if (typeof v === "function") return "a function";
  if (v instanceof RegExp) return String(v);
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return "an array";
  return v === null ? "null" : typeof v === "object" ? "an object" : String(v);
}

/** The valid key within two edits of `key`, for a "did you mean" hint. */
export function closest(key: string, candidates: readonly string[]): string | undefined {
  let best: { key: string; d: number } | undefined;
  for (const candidate of candidates) {
    const d = distance(key.toLowerCase(), candidate);
    if (d <= 2 && (best === undefined || d < best.d)) best = { key: candidate, d };
  }
  return best?.key;
}

function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(
        (row[j] as number) + 1,
        (next[j - 1] as number) + 1,
        (row[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    row = next;
  }
  return row[b.length] as number;
}

export function invalid(where: string, message: string): RouterError {
  return new RouterError("ROUTER_INVALID_FILTER", `${where}: ${message}`);
}
