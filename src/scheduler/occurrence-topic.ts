/**
 * The topic of one occurrence of a recurring announcement: a fixed text, a template naming the
 * occurrence's day (`"standup {{date}}"`), or a function of it, read in the announcement's time zone.
 */
import { renderTemplate } from "../template/template.ts";
import type { OccurrenceTime, RecurringAnnouncement } from "./declarations.ts";

/** The placeholders a topic template may use. */
export const TOPIC_PLACEHOLDERS: readonly (keyof OccurrenceTime)[] = ["date", "weekday", "time"];

/** The longest each placeholder renders, for the topic length check at declaration. */
export const LONGEST_OCCURRENCE: OccurrenceTime = { date: "2026-12-31", weekday: "Wednesday", time: "23:59" };

/** `occurrence` read in `timezone`. */
export function occurrenceTime(occurrence: Date, timezone: string): OccurrenceTime {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: timezone,
    weekday: "long",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).formatToParts(occurrence);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  return {
    date: `${part("year")}-${part("month")}-${part("day")}`,
    weekday: part("weekday"),
    time: `${part("hour")}:${part("minute")}`,
  };
}

/** Whether the topic differs from one occurrence to the next (a template or a function). */
export function isDatedTopic(topic: RecurringAnnouncement["topic"]): boolean {
  return typeof topic === "function" || (typeof topic === "string" && topic.includes("{{"));
}

/** The topic of `spec` for `occurrence`, rendered (`undefined` for a direct message without one). */
export function topicOf(spec: RecurringAnnouncement, occurrence: Date): string | undefined {
  const { topic } = spec;
  if (topic === undefined) return undefined;
  const local = occurrenceTime(occurrence, spec.timezone);
  if (typeof topic === "function") return topic(occurrence, local);
  return topic.includes("{{") ? renderTemplate(topic, { ...local }) : topic;
}
