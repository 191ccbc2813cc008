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

/** Longer than any offset change there is (Antarctica/Troll's is two hours). */
const LOOKBACK_MS = 3 * 60 * 60 * 1000;

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

/** Within the window of which offset change `at` is, or `undefined`: the usual answer, found with two look-ups. */
export function offsetChangeAround(timezone: string, at: number): OffsetChange | undefined {
  const later = utcOffset(timezone, at + 1000);
  const before = utcOffset(timezone, at - LOOKBACK_MS);
  if (later === before) return undefined;
  // Bisect to the first millisecond with the new offset.
  let old = at - LOOKBACK_MS;
  let changed = at + 1000;
  while (changed - old > 1) {
    const mid = Math.floor((old + changed) / 2);
    if (utcOffset(timezone, mid) === later) changed = mid;
    else old = mid;
  }
  const end = changed + Math.abs(later - before);
  return at < end ? { start: changed, end } : undefined;
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
