/**
 * Recurring schedules: a cron expression read in an IANA time zone, validated up front.
 *
 * DST behaviour (what cron-parser 5 does, asserted in the tests):
 * - A wall time that does not exist on the spring-forward day (02:30 in New York or Berlin) is
 *   SHIFTED by the gap: the job fires once that day, at 03:30 local. It is not skipped.
 * - A wall time that happens twice on the fall-back day (01:30 in New York) fires ONCE, at the
 *   first instance (daylight time).
 * - Fixed wall times keep their local time across the change, so their UTC offset changes.
 * - Interval jobs (every 30 minutes, hourly) keep running through the repeated hour in real time.
 * These hold from any instant, also one inside the change's hour (offset-change.ts).
 */
import { createRequire } from "node:module";
import type { CronExpression, CronExpressionParser } from "cron-parser";
import { BothostError } from "../../errors/bothost-error.ts";
import { suggest } from "../../errors/did-you-mean.ts";
import { ChangeWalk, offsetChangeAround } from "./offset-change.ts";

/**
 * A recurring schedule that cannot be used: a bad cron expression, an unknown time zone, or (for
 * the job timer) a duplicate job id.
 * `field` and `value` say which input is wrong; the message says how to fix it.
 */
export class ScheduleError extends BothostError<"SCHEDULE_INVALID"> {
  readonly field: "id" | "cron" | "timezone";
  readonly value: string;

  constructor(field: ScheduleError["field"], value: string, message: string, options?: { cause?: unknown }) {
    super("SCHEDULE_INVALID", message, options);
    this.name = "ScheduleError";
    this.field = field;
    this.value = value;
  }
}

/** A recurring schedule: five cron fields (or six with seconds first, or a macro like `@daily`). */
export interface ScheduleSpec {
  cron: string;
  /** IANA time zone name the cron fields are read in, e.g. `"Europe/Berlin"` or `"UTC"`. */
  timezone: string;
}

/** A validated schedule that computes occurrences without re-parsing. */
export interface CompiledSchedule {
  /** The first occurrence strictly after `after`, or `undefined` if there is none. */
  next(after: Date): Date | undefined;
  /** The latest occurrence at or before `at`, or `undefined` if there is none. */
  latestUpTo(at: Date): Date | undefined;
}

const FIVE_FIELDS = ["minute", "hour", "day-of-month", "month", "day-of-week"] as const;
const SIX_FIELDS = ["second", ...FIVE_FIELDS] as const;
const MACROS = new Set([
  "@yearly",
  "@annually",
  "@monthly",
  "@weekly",
  "@daily",
  "@hourly",
  "@minutely",
  "@secondly",
  "@weekdays",
  "@weekends",
]);

function where(path: string | undefined, field: string): string {
  return path ? `${path}.${field}` : field;
}

const knownZones = new Set<string>();

/**
 * A UTC offset such as "+02:00", "-0530" or "+02" (a sign first; U+2212 is a minus too). Node 20's
 * Intl refuses these and Node 22's and 24's accept them, so they are refused here, on every line.
 */
const OFFSET = /^[+\-\u2212]/;

/** "Etc/GMT-2" for "+02:00" (Etc names reverse the sign), or `undefined` unless whole hours in range. */
function etcName(offset: string): string | undefined {
  const m = /^([+\-\u2212])(\d{2})(?::?00)?$/.exec(offset);
  if (!m) return undefined;
  const hours = Number(m[2]);
  const east = m[1] === "+";
  if (hours === 0) return "UTC";
  if (hours > (east ? 14 : 12)) return undefined;
  return `Etc/GMT${east ? "-" : "+"}${hours}`;
}

/**
 * Throws {@link ScheduleError} unless `timezone` is an IANA zone name this runtime knows. A UTC
 * offset is refused whatever the runtime's Intl accepts: an offset ignores daylight saving time,
 * and a config must mean the same on every Node.js line bothost supports.
 */
function checkTimezone(timezone: string, path?: string): void {
  if (knownZones.has(timezone)) return;
  if (typeof timezone === "string" && OFFSET.test(timezone)) {
    const etc = etcName(timezone);
    throw new ScheduleError(
      "timezone",
      timezone,
      `${where(path, "timezone")} "${timezone}" is a UTC offset, not an IANA time zone; ` +
        `use a name like "Europe/Berlin", which follows daylight saving time` +
        (etc ? `, or "${etc}" for a fixed offset of ${timezone}.` : "."),
    );
  }
  // Given none (JavaScript, or an object built at run time): the field is required here.
  if (timezone === undefined || timezone === null) {
    throw new ScheduleError(
      "timezone",
      String(timezone),
      `${where(path, "timezone")} is required: the IANA time zone the cron is read in, such as "Europe/Berlin", "America/New_York" or "UTC".`,
    );
  }
  try {
    if (typeof timezone !== "string" || timezone.trim() === "") throw new Error("empty");
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch {
    const close =
      typeof timezone === "string"
        ? suggest(timezone, [...Intl.supportedValuesOf("timeZone"), "UTC"])
        : undefined;
    throw new ScheduleError(
      "timezone",
      String(timezone),
      `${where(path, "timezone")} "${String(timezone)}" is not a known IANA time zone; ` +
        (close
          ? `did you mean "${close}"?`
          : `use a name like "Europe/Berlin", "America/New_York" or "UTC".`),
    );
  }
  knownZones.add(timezone);
}

/** The fields that take names, and how to write them. */
const NAMED_FIELDS: Record<string, string> = {
  month: "the numbers 1-12 or the three-letter names JAN-DEC",
  "day-of-week": "the numbers 0-7 or the three-letter names SUN-SAT",
};

/** Turns one cron-parser message about a single field into our wording. */
function describeFieldError(field: string, text: string, message: string): string {
  const value = /got value (\S+) expected range (\d+-\d+)/.exec(message);
  if (value) return `${field} ${value[1]} is out of range (${value[2]})`;
  const range = /got range (\S+) expected range (\d+-\d+)/.exec(message);
  if (range) return `${field} range ${range[1]} is out of range (${range[2]})`;
  const backwards = /Invalid range: (\S+), min/.exec(message);
  if (backwards) return `${field} range ${backwards[1]} runs backwards`;
  // cron-parser reports a misspelt name ("WEDS", "JANUARY") after swapping its known prefix for a
  // number ("got value: 3S", 'cannot resolve alias "uar"'), or from 5.10.7 as it was written
  // ("Invalid alias, got value: WEDS"): name the spellings it takes instead.
  const names = NAMED_FIELDS[field];
  if (names && /[a-z]/i.test(text) && /Invalid characters|resolve alias|Invalid alias/.test(message))
    return `${field} "${text}" is invalid (use ${names})`;
  const detail = message.replace(/^(Constraint|Validation) error, /, "").replace(/\.$/, "");
  return `${field} "${text}" is invalid (${detail})`;
}

/** cron-parser, loaded on the first parse: a daemon whose bots have no schedule never pays for it. */
let parser: typeof CronExpressionParser | undefined;

function parse(expression: string, timezone: string): CronExpression {
  parser ??= (createRequire(import.meta.url)("cron-parser") as typeof import("cron-parser"))
    .CronExpressionParser;
  return parser.parse(expression, { tz: timezone, currentDate: new Date(0) });
}

/** Parses `cron` in `timezone`, or throws {@link ScheduleError} naming the first bad field. */
function parseCron(cron: string, timezone: string, path?: string): CronExpression {
  const label = `${where(path, "cron")} "${String(cron)}"`;
  const fail = (detail: string, cause?: unknown): never => {
    throw new ScheduleError("cron", String(cron), `${label}: ${detail}.`, { cause });
  };
  if (typeof cron !== "string" || cron.trim() === "") fail("the expression is empty");
  const fields = cron.trim().split(/\s+/);
  if (fields.length === 1 && fields[0]?.startsWith("@")) {
    if (!MACROS.has(fields[0].toLowerCase())) fail(`unknown macro; use one of ${[...MACROS].join(", ")}`);
  } else if (fields.length !== 5 && fields.length !== 6) {
    fail(
      `expected 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, ` +
        `or a macro like @daily; got ${fields.length}`,
    );
  }
  let wholeError: Error;
  try {
    const expression = parse(cron, timezone);
    expression.next(); // throws for a day that never comes (30 February)
    return expression;
  } catch (err) {
    wholeError = err as Error;
  }
  // Parse each field alone (the others "*") so the error can name the field cron-parser disliked.
  const names = fields.length === 6 ? SIX_FIELDS : FIVE_FIELDS;
  fields.forEach((text, i) => {
    const probe = fields.map((f, j) => (j === i ? f : "*")).join(" ");
    try {
      parse(probe, "UTC");
    } catch (err) {
      fail(describeFieldError(names[i] ?? "field", text, (err as Error).message), err);
    }
  });
  if (/day of month/i.test(wholeError.message)) {
    fail("the day-of-month and month fields never match (like 30 February)", wholeError);
  }
  return fail(`it never fires (${wholeError.message})`, wholeError);
}

/**
 * Validates `spec` and returns a schedule that computes occurrences. Throws {@link ScheduleError}
 * (`SCHEDULE_INVALID`) naming the bad field; `path` prefixes the field in messages (a config path).
 */
export function compileSchedule(spec: ScheduleSpec, path?: string): CompiledSchedule {
  checkTimezone(spec.timezone, path);
  const expression = parseCron(spec.cron, spec.timezone, path);
  const step = (move: () => { toDate(): Date }): Date | undefined => {
    try {
      return move().toDate();
    } catch {
      // cron-parser throws when no occurrence is left (it checked at compile time that one exists).
      return undefined;
    }
  };
  let walk: ChangeWalk | undefined;
  const next = (after: Date): Date | undefined => {
    const t = after.getTime();
    // Right after a DST change, cron-parser's walk from before the change (see offset-change.ts).
    if (!walk?.answers(t)) {
      const change = offsetChangeAround(spec.timezone, t);
      walk = change && new ChangeWalk(parse(spec.cron, spec.timezone), change);
    }
    if (walk) return walk.next(t);
    expression.reset(after);
    return step(() => expression.next());
  };
  return {
    next,
    latestUpTo(at) {
      expression.reset(new Date(at.getTime() + 1));
      let latest = step(() => expression.prev());
      // cron-parser's prev() answers the second pass of a time repeated in autumn, which is not an
      // occurrence when the first pass was: go back further to one that is.
      while (latest !== undefined && next(new Date(latest.getTime() - 1))?.getTime() !== latest.getTime()) {
        expression.reset(latest);
        latest = step(() => expression.prev());
      }
      if (latest === undefined) return undefined;
      // It also misses the shifted occurrence on a spring-forward day (it answers the day before),
      // so walk forward with next(), which is right, to the true latest occurrence.
      for (let n = next(latest); n !== undefined && n.getTime() <= at.getTime(); n = next(n)) latest = n;
      return latest;
    },
  };
}

/**
 * Throws {@link ScheduleError} if `spec` is unusable; returns nothing otherwise.
 *
 * @example
 * ```ts
 * validateSchedule({ cron: "0 9 * * 1", timezone: "America/New_York" }, "bots.digest.schedule");
 * ```
 */
export function validateSchedule(spec: ScheduleSpec, path?: string): void {
  compileSchedule(spec, path);
}

/**
 * The next `count` occurrences of a schedule strictly after `from`, in order.
 *
 * @example
 * ```ts
 * nextOccurrences({ cron: "0 9 * * 1-5", timezone: "Europe/Berlin" }, new Date(), 3);
 * ```
 */
export function nextOccurrences(spec: ScheduleSpec, from: Date, count: number): Date[] {
  const schedule = compileSchedule(spec);
  const out: Date[] = [];
  for (let n = schedule.next(from); n !== undefined && out.length < count; n = schedule.next(n)) out.push(n);
  return out;
}

/**
 * A stable identity for one occurrence of a job, `<id>@<ISO UTC>`, used to make bookings
 * idempotent (the same occurrence always gets the same key, whichever process computes it).
 */
export function occurrenceKey(id: string, date: Date): string {
  return `${id}@${date.toISOString()}`;
}
