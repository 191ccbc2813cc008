/**
 * What keeps a value from being a bot (no `setup`, bad `events` or `settings`), in the words of
 * `MODULE_INVALID`: for a module's default export, or for a definition given as a value (the
 * testing kit's `runBot({ bot })`).
 */
import { suggest } from "../errors/did-you-mean.ts";
import { eventSchemas, isKnownEventType } from "../wire/events.ts";

/**
 * What is wrong with a definition, as sentence parts; empty when it is usable. `given`: it was
 * passed as a value (runBot's `bot`), not exported by a module, and is said so.
 */
export function definitionProblems(definition: unknown, given = false): string[] {
  const write = given ? "pass" : "write export default";
  if (!isObject(definition)) {
    return [
      given
        ? `is ${kindOf(definition)}, not a bot: pass what defineBot({ setup(bot, settings) { … } }) returned`
        : `does not export a bot (its default export is ${kindOf(definition)}): write export default defineBot({ setup(bot, settings) { … } })`,
    ];
  }
  const problems: string[] = [];
  if (typeof definition === "function" && (definition as { setup?: unknown }).setup === undefined) {
    problems.push(
      `${given ? "is" : "exports"} a function, not a bot: ${write} defineBot({ setup: yourFunction })`,
    );
  } else if (typeof definition.setup !== "function") {
    problems.push(
      definition.setup === undefined
        ? `has no setup function: add setup(bot, settings) { … } to ${given ? "it" : "its default export"}`
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

export function isObject(value: unknown): value is Record<string, unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null;
}

function kindOf(value: unknown): string {
  if (value === undefined) return "missing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return `a ${typeof value}`;
}
