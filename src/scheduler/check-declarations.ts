/**
 * Checks of `bot.recurring()` and `bot.cron()` arguments at declaration time, so a mistake stops
 * the bot's setup with a message naming the call and the field, before anything is booked.
 */

import { codePointLength } from "../effects/limits/code-points.ts";
import { parseTemplate, renderTemplate } from "../template/template.ts";
import { LONGEST_OCCURRENCE, TOPIC_PLACEHOLDERS } from "./occurrence-topic.ts";
import { compileSchedule, ScheduleError } from "./timing/occurrences.ts";

/** The server's default `max_topic_length`; the register response may allow less or more. */
const MAX_TOPIC = 60;

function scheduleProblem(cron: unknown, timezone: unknown, path: string): string | undefined {
  try {
    compileSchedule({ cron: cron as string, timezone: timezone as string }, path);
    return undefined;
  } catch (err) {
    if (err instanceof ScheduleError) return err.message;
    throw err;
  }
}

/** What is wrong with a `bot.recurring(id, announcement)` call, or `undefined`. */
export function recurringProblem(id: string, announcement: unknown): string | undefined {
  const where = `bot.recurring("${id}")`;
  if (typeof announcement !== "object" || announcement === null) {
    return `${where}: pass { cron, timezone, to, topic, content }.`;
  }
  const a = announcement as Record<string, unknown>;
  const schedule = scheduleProblem(a.cron, a.timezone, where);
  if (schedule) return schedule;
  const to = a.to;
  const isId = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v > 0;
  const isChannel = (typeof to === "string" && to.trim() !== "") || isId(to);
  const isUsers =
    Array.isArray(to) &&
    to.length > 0 &&
    to.every((u) => isId(u) || (typeof u === "string" && u.trim() !== ""));
  if (!isChannel && !isUsers) {
    return `${where}.to must be a channel name or id, or a non-empty list of user ids or emails; got ${JSON.stringify(to) ?? "nothing"}.`;
  }
  if (isChannel) {
    if (typeof a.topic === "function") return contentProblem(where, a.content);
    if (typeof a.topic !== "string")
      return `${where}.topic is required when "to" is a channel: a text, a template such as "standup {{date}}", or a function of the occurrence.`;
    // A single-brace word is plain text unless it names a placeholder (`{date}`: a misspelling).
    const { problems, legacy } = parseTemplate(a.topic, TOPIC_PLACEHOLDERS);
    const meant = problems.filter(
      (_p, i) => i >= legacy.length || TOPIC_PLACEHOLDERS.includes(legacy[i] as never),
    );
    if (meant.length > 0) return `${where}.topic: ${meant.join("; ")}.`;
    // The longest a template renders: the longest weekday, every date and time as long as any.
    const longest = codePointLength(renderTemplate(a.topic, { ...LONGEST_OCCURRENCE }).trim());
    if (longest > MAX_TOPIC) {
      return `${where}.topic is ${a.topic.includes("{{") ? "up to " : ""}${longest} characters; topics are at most ${MAX_TOPIC}.`;
    }
  }
  return contentProblem(where, a.content);
}

function contentProblem(where: string, content: unknown): string | undefined {
  if (!((typeof content === "string" && content.trim() !== "") || typeof content === "function")) {
    return `${where}.content must be non-empty Markdown text, or a function returning it at booking time.`;
  }
  return undefined;
}

/** What is wrong with a `bot.cron(expression, options, handler)` call, or `undefined`. */
export function cronProblem(expression: unknown, options: unknown): string | undefined {
  const where = `bot.cron(${JSON.stringify(expression)})`;
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    return `${where}: options must be an object like { timezone: "Europe/Berlin", missed: "skip" }.`;
  }
  const o = (options ?? {}) as Record<string, unknown>;
  const schedule = scheduleProblem(expression, o.timezone ?? "UTC", where);
  // The expression is bot.cron's own argument, not a field of it: `bot.cron("* * *"): …`.
  if (schedule) return schedule.replace(`${where}.cron "${String(expression)}"`, where);
  if (o.missed !== undefined && o.missed !== "skip" && o.missed !== "run-once") {
    return `${where}.missed ${JSON.stringify(o.missed)}: use "skip" or "run-once".`;
  }
  if (o.id !== undefined && (typeof o.id !== "string" || o.id.trim() === "")) {
    return `${where}.id must be a non-empty string.`;
  }
  return undefined;
}
