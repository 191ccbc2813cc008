/**
 * Whether a module's export is a usable bot definition, and every way in which it is not.
 */
import { suggest } from "../config/did-you-mean.ts";
import { eventSchemas, isKnownEventType } from "../wire/events.ts";

/**
 * The module's bot definition, unwrapped from `default` (ESM `export default`, CommonJS
 * `module.exports = …`, or a CommonJS build of an ES module: `exports.default` under `default`).
 */
export function unwrapDefinition(namespace: unknown): unknown {
  let current = namespace;
  for (let depth = 0; depth < 3; depth++) {
    if (!isObject(current) || typeof current.setup === "function") return current;
    if (current.default === undefined) return current;
    current = current.default;
  }
  return current;
}

/** What is wrong with a definition, as sentence parts; empty when it is usable. */
export function definitionProblems(definition: unknown): string[] {
  if (!isObject(definition)) {
    return [
      `does not export a bot (its default export is ${kindOf(definition)}): write export default defineBot({ setup(bot, settings) { … } })`,
    ];
  }
  const problems: string[] = [];
  if (typeof definition === "function" && (definition as { setup?: unknown }).setup === undefined) {
    problems.push("exports a function, not a bot: write export default defineBot({ setup: yourFunction })");
  } else if (typeof definition.setup !== "function") {
    problems.push(
      definition.setup === undefined
        ? "has no setup function: add setup(bot, settings) { … } to its default export"
        : `has a setup that is ${kindOf(definition.setup)}, not a function: make it setup(bot, settings) { … }`,
    );
  }
  const { events, settings } = definition;
  if (events !== undefined) {
    if (!Array.isArray(events) || !events.every((e) => typeof e === "string")) {
      problems.push(
        'has events that is not a list of event type names: write events: ["message", "reaction"]',
      );
    } else {
      for (const name of events.filter((e: string) => !isKnownEventType(e))) {
        const close = suggest(name, Object.keys(eventSchemas));
        problems.push(`lists the unknown event type "${name}"${close ? `: did you mean "${close}"?` : ""}`);
      }
    }
  }
  // Detected by behaviour, not instanceof: the module may bring its own copy of zod.
  if (settings !== undefined && !(isObject(settings) && typeof settings.safeParse === "function")) {
    problems.push("has settings that is not a zod schema: write settings: z.object({ … })");
  }
  return problems;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null;
}

function kindOf(value: unknown): string {
  if (value === undefined) return "missing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return `a ${typeof value}`;
}
