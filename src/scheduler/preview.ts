/**
 * What `bothost schedule preview` shows: each bot's recurring announcements and cron jobs with
 * their next runs, computed offline from the declarations its `setup` makes.
 */
import type { ScheduleDeclarations } from "./bot-scheduler.ts";
import type { RecurringAnnouncement } from "./declarations.ts";
import { cronJobIds } from "./local-jobs.ts";
import { isDatedTopic, topicOf } from "./occurrence-topic.ts";
import { nextOccurrences } from "./timing/occurrences.ts";

/** One schedule and its next runs. */
export interface PreviewEntry {
  kind: "announcement" | "cron";
  id: string;
  cron: string;
  timezone: string;
  /** Where an announcement goes, in words (`channel "team" › standup`). */
  target?: string;
  /** A cron job's missed-run policy. */
  missed?: "skip" | "run-once";
  runs: Date[];
}

/** The next `count` runs after `from` of every declaration of one bot. */
export function previewEntries(
  declarations: ScheduleDeclarations,
  from: Date,
  count: number,
): PreviewEntry[] {
  const entries: PreviewEntry[] = [];
  for (const [id, a] of declarations.recurring) {
    const runs = nextOccurrences(a, from, count);
    entries.push({
      kind: "announcement",
      id,
      cron: a.cron,
      timezone: a.timezone,
      target: describeTarget(a, runs[0]),
      runs,
    });
  }
  const ids = cronJobIds(declarations.cronJobs);
  declarations.cronJobs.forEach((job, i) => {
    const timezone = job.options.timezone ?? "UTC";
    entries.push({
      kind: "cron",
      id: ids[i]!,
      cron: job.expression,
      timezone,
      missed: job.options.missed ?? "skip",
      runs: nextOccurrences({ cron: job.expression, timezone }, from, count),
    });
  });
  return entries;
}

/** A dated topic is shown as the first run's (`standup 2026-03-06`), with its template when it has one. */
function describeTarget(a: RecurringAnnouncement, first: Date | undefined): string {
  if (Array.isArray(a.to)) return `direct message to ${a.to.join(", ")}`;
  const channel = typeof a.to === "number" ? `channel #${a.to}` : `channel "${String(a.to)}"`;
  if (!isDatedTopic(a.topic) || first === undefined)
    return `${channel} › ${(a.topic as string | undefined) ?? ""}`;
  const template = typeof a.topic === "string" ? ` (${a.topic})` : "";
  return `${channel} › ${topicOf(a, first)}${template}`;
}

/** A run in its time zone and in UTC, e.g. `Sun 2026-03-29 09:00 +02:00 (2026-03-29T07:00:00Z)`. */
export function formatRun(date: Date, timezone: string): string {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: timezone,
    weekday: "short",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    timeZoneName: "longOffset",
  }).formatToParts(date);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  const seconds = part("second") === "00" ? "" : `:${part("second")}`;
  const offset = part("timeZoneName").replace(/^GMT$/, "GMT+00:00").replace(/^GMT/, "");
  const local = `${part("weekday")} ${part("year")}-${part("month")}-${part("day")} ${part("hour")}:${part("minute")}${seconds}`;
  return `${local} ${offset} (${date.toISOString().replace(".000Z", "Z")})`;
}
