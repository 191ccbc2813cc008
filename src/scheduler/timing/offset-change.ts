/**
 * The window right after a time zone's UTC offset change (a DST change), where cron-parser's
 * `reset(after); next()` is wrong: it reads `after`'s wall-clock time and searches from there, so
 * - in autumn, from the repeated hour's second pass (02:00–02:59 CET in Berlin), it answers the
 *   second 02:30 although the first one was the occurrence (the job would run twice);
 * - in spring, from just after the gap (03:00–03:29 CEST), it answers the next day although the
 *   skipped 02:30 is shifted to 03:30 (the job would not run that day).
 * cron-parser's walk from before the change is right, so inside the window the next occurrence is
 * taken from that walk ({@link ChangeWalk}). Everywhere else `reset(after); next()` is right.
 */
import type { CronExpression } from "cron-parser";

const HOUR_MS = 60 * 60 * 1000;
/** The sampling step looking for offset changes: shorter than any time between two. */
const STEP_MS = 6 * HOUR_MS;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** `timezone`'s UTC offset at `t`, in milliseconds (east positive). */
function utcOffset(timezone: string, t: number): number {
  let format = formatters.get(timezone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timezone, format);
  }
  const p: Record<string, number> = {};
  for (const { type, value } of format.formatToParts(t)) p[type] = Number(value);
  const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return wall - (t - (((t % 1000) + 1000) % 1000));
}

/**
 * An offset change: `start` is its first instant; `end` is `start` plus the change's size. Its
 * window, where {@link ChangeWalk} answers, is `[start - 1 s, end)`: cron-parser also goes wrong
 * from the last second before a two-hour change (Antarctica/Troll's), reading its milliseconds.
 */
export interface OffsetChange {
  start: number;
  end: number;
}

/**
 * How far back from an instant a change whose window holds it may start: its size and a step. The
 * largest change in the time zone database is a day (Pacific/Apia skipped 30 December 2011).
 */
const LOOKBACK_MS = 24 * HOUR_MS + STEP_MS;

/**
 * Each zone's offset change in each sampling step looked at so far (`null`: none), by the step's
 * index: steps start at multiples of {@link STEP_MS}. Found when first needed, so a start costs a
 * few formats around now, not a sweep of the year (about 1,500 formats per zone).
 */
const changesBySteps = new Map<string, Map<number, OffsetChange | null>>();

function changeInStep(timezone: string, step: number): OffsetChange | null {
  let steps = changesBySteps.get(timezone);
  if (steps === undefined) {
    steps = new Map();
    changesBySteps.set(timezone, steps);
  }
  let change = steps.get(step);
  if (change !== undefined) return change;
  change = null;
  const sampled = step * STEP_MS;
  const offset = utcOffset(timezone, sampled);
  const next = utcOffset(timezone, sampled + STEP_MS);
  if (next !== offset) {
    // Bisect to the first millisecond with the new offset.
    let old = sampled;
    let changed = sampled + STEP_MS;
    while (changed - old > 1) {
      const mid = Math.floor((old + changed) / 2);
      if (utcOffset(timezone, mid) === next) changed = mid;
      else old = mid;
    }
    change = { start: changed, end: changed + Math.abs(next - offset) };
  }
  steps.set(step, change);
  return change;
}

/** The offset change in whose window `at` is, or `undefined` (the usual answer). */
export function offsetChangeAround(timezone: string, at: number): OffsetChange | undefined {
  const last = Math.floor((at + 1000) / STEP_MS);
  for (let step = Math.floor((at - LOOKBACK_MS) / STEP_MS); step <= last; step++) {
    const change = changeInStep(timezone, step);
    if (change !== null && change.start - 1000 <= at && at < change.end) return change;
  }
  return undefined;
}

/**
 * cron-parser's walk from just before an offset change, kept while the calls move forward (a job
 * asks for the occurrence after the one it just ran), so a per-second job in the window costs one
 * step per call rather than a walk from the change each time.
 */
export class ChangeWalk {
  readonly change: OffsetChange;
  readonly #expression: CronExpression;
  /** The walk has no occurrence in `(passed, ahead)`. */
  #passed: number;
  #ahead: Date | undefined;

  constructor(expression: CronExpression, change: OffsetChange) {
    this.change = change;
    this.#expression = expression;
    // The last whole second before the change (from its last millisecond, cron-parser goes wrong
    // when the change is two hours, as in Antarctica/Troll).
    this.#passed = change.start - 1000;
    expression.reset(new Date(this.#passed));
    this.#ahead = this.#step();
  }

  /** Whether {@link next} can answer for `after`: in the change's window, not passed by the walk. */
  answers(after: number): boolean {
    return this.#passed <= after && after < this.change.end;
  }

  /** The walk's first occurrence strictly after `after` (which {@link answers} must allow). */
  next(after: number): Date | undefined {
    while (this.#ahead !== undefined && this.#ahead.getTime() <= after) {
      this.#passed = this.#ahead.getTime();
      this.#ahead = this.#step();
    }
    return this.#ahead;
  }

  #step(): Date | undefined {
    try {
      return this.#expression.next().toDate();
    } catch {
      return undefined; // no occurrence left
    }
  }
}
