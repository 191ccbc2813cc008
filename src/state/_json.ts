/**
 * The store keeps values as JSON text, so anything that would not come back unchanged from
 * `JSON.parse(JSON.stringify(v))` is refused up front (with the path inside the value) instead of
 * being silently altered: `undefined` vanishing from objects, `NaN` becoming `null`, a `Date`
 * becoming a string, a `Map` becoming `{}`.
 */

import { StateError } from "./state-error.ts";
import type { JsonValue } from "./state-store.ts";

/** Serialize `value` for key `key`, or throw `STATE_INVALID_VALUE` naming the offending path. */
export function toJsonText(key: string, value: unknown): string {
  const problem = findProblem(value, "", new Set());
  if (problem) {
    throw new StateError(
      "STATE_INVALID_VALUE",
      `Cannot store key "${key}": value${problem.path} ${problem.reason}. Store plain JSON (objects, arrays, strings, finite numbers, booleans, null).`,
    );
  }
  return JSON.stringify(value);
}

export function fromJsonText(text: string): JsonValue {
  return JSON.parse(text) as JsonValue;
}

interface Problem {
  path: string;
  reason: string;
}

function findProblem(value: unknown, path: string, parents: Set<object>): Problem | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : { path, reason: `is ${value} (not finite)` };
    case "object":
      break;
    default:
      return { path, reason: `is ${typeof value}` };
  }
  if (value === null) return undefined;
  if (parents.has(value)) return { path, reason: "is a circular reference" };
  parents.add(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const problem = findProblem(value[i], `${path}[${i}]`, parents);
        if (problem) return problem;
      }
      return undefined;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      const name = (value as object).constructor?.name ?? "object";
      return { path, reason: `is a ${name}, not a plain object (convert it, e.g. date.toISOString())` };
    }
    for (const [k, v] of Object.entries(value)) {
      const problem = findProblem(v, `${path}.${k}`, parents);
      if (problem) return problem;
    }
    return undefined;
  } finally {
    parents.delete(value);
  }
}
