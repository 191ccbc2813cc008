/**
 * A tiny, safe template substituter: `{{body.pull_request.title}}` is replaced by the value at
 * that path. Paths are dot-separated keys (digits index arrays); nothing is evaluated, and
 * prototype keys are never followed.
 */

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_$-]+(?:\.[A-Za-z0-9_$-]+)*)\s*(?:\|\s*([^}]*?)\s*)?\}\}/g;
const FORBIDDEN = new Set(["__proto__", "prototype", "constructor"]);

/** The value at `path` inside `scope`, or undefined. Only own properties are followed. */
export function valueAtPath(scope: unknown, path: string): unknown {
  let current: unknown = scope;
  for (const key of path.split(".")) {
    if (FORBIDDEN.has(key) || current === null || typeof current !== "object") return undefined;
    if (!Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function text(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/**
 * Replace every `{{path}}` in `template` with the value found in `scope`. A missing value renders
 * as the fallback after `|` (`{{body.ref | main}}`), else as an empty string. Objects and arrays
 * render as JSON.
 *
 * @example
 * ```ts
 * renderTemplate("{{body.sender.login}} pushed to {{body.ref | main}}", { body });
 * // "octocat pushed to refs/heads/main"
 * ```
 */
export function renderTemplate(template: string, scope: Record<string, unknown>): string {
  return template.replace(PLACEHOLDER, (_all, path: string, fallback: string | undefined) => {
    return text(valueAtPath(scope, path)) ?? fallback ?? "";
  });
}
