/**
 * The one template syntax of bot-facing messages (webhook-relay topics and contents, the
 * moderation bot's actions, the welcome bot's greeting): `{{name}}` or `{{body.pull_request.title}}`
 * is replaced by the value at that path, `{{path | fallback}}` gives text for a missing value.
 * Paths are dot-separated keys (digits index arrays); nothing is evaluated, and prototype keys are
 * never followed. (The `${ENV}` of the YAML config is interpolation of the config file, not this.)
 */

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_$-]+(?:\.[A-Za-z0-9_$-]+)*)\s*(?:\|\s*([^}]*?)\s*)?\}\}/g;
/** The single-brace `{name}` of earlier versions of the shipped bots, outside any `{{…}}`. */
const LEGACY = /(?<!\{)\{(\w+)\}(?!\})/g;
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
 * render as JSON. Text that is not a placeholder, single braces included, is left as it is.
 *
 * @example
 * ```ts
 * renderTemplate("{{body.sender.login}} pushed to {{body.ref | main}}", { body });
 * // "octocat pushed to refs/heads/main"
 * renderTemplate("Welcome, {{name}}!", { name: "Ada" }); // "Welcome, Ada!"
 * ```
 */
export function renderTemplate(template: string, scope: Record<string, unknown>): string {
  return template.replace(PLACEHOLDER, (_all, path: string, fallback: string | undefined) => {
    return text(valueAtPath(scope, path)) ?? fallback ?? "";
  });
}

/** What a template uses, for validating it against the names a bot fills in. */
export interface TemplateParts {
  /** The path of each `{{path}}` placeholder, in order of appearance. */
  paths: string[];
  /** Names written in the old single-brace spelling (`{name}`), which {@link renderTemplate} leaves as they are. */
  legacy: string[];
  /** The template with each old `{name}` rewritten as `{{name}}`. */
  upgraded: string;
  /**
   * What is wrong with it, one sentence each, to report at the setting: an old `{name}` (naming the
   * new spelling), when `fields` is given a placeholder that is not one of them, and a `{{` that
   * begins no placeholder (`{{date`, `{{ a b }}`), which would be sent as it is.
   */
  problems: string[];
}

/**
 * The placeholders of a template, the old single-brace `{name}` spellings it still uses, and (for
 * a bot's settings schema) what is wrong with it given the `fields` the bot fills in.
 *
 * @example
 * ```ts
 * parseTemplate("Hi {name}, see {{link}}", ["name", "link"]);
 * // { paths: ["link"], legacy: ["name"], upgraded: "Hi {{name}}, see {{link}}",
 * //   problems: ["uses {name}, the old placeholder spelling: write {{name}}"] }
 * ```
 */
export function parseTemplate(template: string, fields?: readonly string[]): TemplateParts {
  const paths = [...template.matchAll(PLACEHOLDER)].map((m) => m[1]!);
  const legacy = [...template.matchAll(LEGACY)].map((m) => m[1]!);
  const known = fields?.map((f) => `{{${f}}}`).join(", ");
  const problems = [
    ...legacy.map((name) => `uses {${name}}, the old placeholder spelling: write {{${name}}}`),
    ...(fields === undefined ? [] : paths.filter((p) => !fields.includes(p))).map(
      (path) => `uses {{${path}}}; the placeholders are ${known}`,
    ),
    ...malformed(template).map(
      (text) => `has "${text}", which is no placeholder: write {{name}} or {{name | fallback}}`,
    ),
  ];
  return { paths, legacy, upgraded: template.replace(LEGACY, "{{$1}}"), problems };
}

/** Each `{{` left once the placeholders are taken out, with up to 20 characters after it. */
function malformed(template: string): string[] {
  const rest = template.replace(PLACEHOLDER, "");
  return [...rest.matchAll(/\{\{[^{}]{0,20}\}?\}?/g)].map((m) => m[0]);
}
