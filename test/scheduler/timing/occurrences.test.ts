import { describe, expect, it } from "vitest";
import {
  compileSchedule,
  nextOccurrences,
  occurrenceKey,
  ScheduleError,
  type ScheduleSpec,
  validateSchedule,
} from "../../../src/scheduler/timing/occurrences.ts";

const iso = (dates: Date[]) => dates.map((d) => d.toISOString());
/** The first occurrence strictly after `after` (what a freshly compiled schedule answers). */
const nextOccurrence = (spec: ScheduleSpec, after: Date) => compileSchedule(spec).next(after);
const NY = "America/New_York";
const BERLIN = "Europe/Berlin";

/** Local wall time of `date` in `timeZone`, e.g. "2026-03-08 03:30 EDT". */
function local(date: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
    timeZoneName: "short",
  }).formatToParts(date);
  const get = (type: string) => parts.find((p) => p.type === type)?.value;
  return `${get("year")}-${get("month")}-${get("day")} ${get("hour")}:${get("minute")} ${get("timeZoneName")}`;
}

describe("nextOccurrences across DST (2026)", () => {
  it("New York spring forward: a daily 02:30 job is shifted to 03:30 EDT that day, not skipped", () => {
    const got = nextOccurrences({ cron: "30 2 * * *", timezone: NY }, new Date("2026-03-06T12:00:00Z"), 4);
    expect(iso(got)).toEqual([
      "2026-03-07T07:30:00.000Z",
      "2026-03-08T07:30:00.000Z",
      "2026-03-09T06:30:00.000Z",
      "2026-03-10T06:30:00.000Z",
    ]);
    expect(got.map((d) => local(d, NY))).toEqual([
      "2026-03-07 02:30 EST",
      "2026-03-08 03:30 EDT",
      "2026-03-09 02:30 EDT",
      "2026-03-10 02:30 EDT",
    ]);
  });

  it("Berlin spring forward: a daily 02:30 job is shifted to 03:30 CEST that day, not skipped", () => {
    const got = nextOccurrences(
      { cron: "30 2 * * *", timezone: BERLIN },
      new Date("2026-03-27T12:00:00Z"),
      4,
    );
    expect(iso(got)).toEqual([
      "2026-03-28T01:30:00.000Z",
      "2026-03-29T01:30:00.000Z",
      "2026-03-30T00:30:00.000Z",
      "2026-03-31T00:30:00.000Z",
    ]);
    expect(local(got[1]!, BERLIN)).toBe("2026-03-29 03:30 GMT+2");
  });

  it("New York fall back: a daily 01:30 job fires once (the EDT instance), not twice", () => {
    const got = nextOccurrences({ cron: "30 1 * * *", timezone: NY }, new Date("2026-10-30T12:00:00Z"), 4);
    expect(iso(got)).toEqual([
      "2026-10-31T05:30:00.000Z",
      "2026-11-01T05:30:00.000Z",
      "2026-11-02T06:30:00.000Z",
      "2026-11-03T06:30:00.000Z",
    ]);
    expect(got.map((d) => local(d, NY))).toEqual([
      "2026-10-31 01:30 EDT",
      "2026-11-01 01:30 EDT",
      "2026-11-02 01:30 EST",
      "2026-11-03 01:30 EST",
    ]);
  });

  it("Berlin fall back: a daily 02:30 job fires once (the CEST instance), not twice", () => {
    const got = nextOccurrences(
      { cron: "30 2 * * *", timezone: BERLIN },
      new Date("2026-10-23T12:00:00Z"),
      4,
    );
    expect(iso(got)).toEqual([
      "2026-10-24T00:30:00.000Z",
      "2026-10-25T00:30:00.000Z",
      "2026-10-26T01:30:00.000Z",
      "2026-10-27T01:30:00.000Z",
    ]);
  });

  it("a weekly Monday 09:00 job keeps 09:00 local in New York; the UTC offset changes", () => {
    const spring = nextOccurrences({ cron: "0 9 * * 1", timezone: NY }, new Date("2026-02-28T12:00:00Z"), 2);
    expect(iso(spring)).toEqual(["2026-03-02T14:00:00.000Z", "2026-03-09T13:00:00.000Z"]);
    const fall = nextOccurrences({ cron: "0 9 * * 1", timezone: NY }, new Date("2026-10-25T12:00:00Z"), 2);
    expect(iso(fall)).toEqual(["2026-10-26T13:00:00.000Z", "2026-11-02T14:00:00.000Z"]);
    expect([...spring, ...fall].map((d) => local(d, NY).slice(11, 16))).toEqual([
      "09:00",
      "09:00",
      "09:00",
      "09:00",
    ]);
  });

  it("a weekly Monday 09:00 job keeps 09:00 local in Berlin; the UTC offset changes", () => {
    const spring = nextOccurrences(
      { cron: "0 9 * * 1", timezone: BERLIN },
      new Date("2026-03-21T12:00:00Z"),
      2,
    );
    expect(iso(spring)).toEqual(["2026-03-23T08:00:00.000Z", "2026-03-30T07:00:00.000Z"]);
    const fall = nextOccurrences(
      { cron: "0 9 * * 1", timezone: BERLIN },
      new Date("2026-10-18T12:00:00Z"),
      2,
    );
    expect(iso(fall)).toEqual(["2026-10-19T07:00:00.000Z", "2026-10-26T08:00:00.000Z"]);
  });

  it("an every-30-minutes job runs through the repeated hour in real time (New York fall back)", () => {
    const got = nextOccurrences({ cron: "*/30 * * * *", timezone: NY }, new Date("2026-11-01T04:45:00Z"), 5);
    expect(got.map((d) => local(d, NY))).toEqual([
      "2026-11-01 01:00 EDT",
      "2026-11-01 01:30 EDT",
      "2026-11-01 01:00 EST",
      "2026-11-01 01:30 EST",
      "2026-11-01 02:00 EST",
    ]);
  });
});

/** Every minute from `from` (inclusive) to `to` (exclusive), plus the seconds around each hour. */
function instants(from: string, to: string): Date[] {
  const out: Date[] = [];
  for (let t = Date.parse(from); t < Date.parse(to); t += 60_000) {
    out.push(new Date(t));
    if (t % HOUR === 0) for (const d of [-1000, -1, 1, 999]) out.push(new Date(t + d));
  }
  return out;
}
const HOUR = 3_600_000;

describe("from inside a DST change's window (2026)", () => {
  // Each: a daily job at a wall time the change skips or repeats, the hours around the change, the
  // occurrence that day and the next day's. From every instant before that day's occurrence, next()
  // is that occurrence; from every one after it, the next day's, never a second or a skipped one.
  it.each([
    [
      "Berlin autumn (02:30 repeated)",
      "30 2 * * *",
      BERLIN,
      "2026-10-25T00:00:00Z",
      "2026-10-25T00:30:00.000Z",
      "2026-10-26T01:30:00.000Z",
      "2026-10-24T00:30:00.000Z",
    ],
    [
      "Berlin spring (02:30 skipped)",
      "30 2 * * *",
      BERLIN,
      "2026-03-29T00:00:00Z",
      "2026-03-29T01:30:00.000Z",
      "2026-03-30T00:30:00.000Z",
      "2026-03-28T01:30:00.000Z",
    ],
    [
      "New York autumn (01:30 repeated)",
      "30 1 * * *",
      NY,
      "2026-11-01T04:00:00Z",
      "2026-11-01T05:30:00.000Z",
      "2026-11-02T06:30:00.000Z",
      "2026-10-31T05:30:00.000Z",
    ],
    [
      "New York spring (02:30 skipped)",
      "30 2 * * *",
      NY,
      "2026-03-08T06:00:00Z",
      "2026-03-08T07:30:00.000Z",
      "2026-03-09T06:30:00.000Z",
      "2026-03-07T07:30:00.000Z",
    ],
  ])(
    "%s: next() and latestUpTo() from every minute of the night",
    (_, cron, timezone, from, today, tomorrow, yesterday) => {
      const schedule = compileSchedule({ cron, timezone });
      const to = new Date(Date.parse(from) + 3 * HOUR).toISOString();
      const wrong = instants(from, to).flatMap((after) => {
        const before = after.getTime() < Date.parse(today);
        const want = [before ? today : tomorrow, before ? yesterday : today];
        const got = [schedule.next(after)?.toISOString(), schedule.latestUpTo(after)?.toISOString()];
        return got.join() === want.join() ? [] : [`${after.toISOString()}: ${got.join(", ")}`];
      });
      expect(wrong).toEqual([]);
    },
  );

  it.each([
    ["0 * * * *", BERLIN, "2026-10-25T00:00:00Z"],
    ["*/30 * * * *", NY, "2026-11-01T05:00:00Z"],
    ["15 1-3 * * *", BERLIN, "2026-10-25T00:00:00Z"],
    ["0 */2 * * *", BERLIN, "2026-03-29T00:00:00Z"],
    ["0 2,3 * * *", NY, "2026-03-08T06:00:00Z"],
    ["*/20 * * * * *", BERLIN, "2026-10-25T00:50:00Z"],
  ])(
    "%s in %s from any instant (any order) agrees with the occurrences listed from before the change",
    (cron, timezone, from) => {
      const walked = nextOccurrences({ cron, timezone }, new Date(Date.parse(from) - 2 * HOUR), 1000).map(
        (d) => d.getTime(),
      );
      const schedule = compileSchedule({ cron, timezone });
      const to = new Date(
        Date.parse(from) + (cron.split(" ").length === 6 ? HOUR / 2 : 3 * HOUR),
      ).toISOString();
      const all = instants(from, to);
      const wrong = [...all, ...all.reverse()].flatMap((after) => {
        const want = walked.find((w) => w > after.getTime());
        const got = schedule.next(after)?.getTime();
        return got === want ? [] : [`${after.toISOString()}: ${got && iso([new Date(got)])}`];
      });
      expect(wrong).toEqual([]);
    },
  );
});

describe("occurrence basics", () => {
  it("nextOccurrence is strictly after the given instant", () => {
    const spec = { cron: "0 * * * *", timezone: "UTC" };
    expect(nextOccurrence(spec, new Date("2026-01-01T10:00:00.000Z"))?.toISOString()).toBe(
      "2026-01-01T11:00:00.000Z",
    );
    expect(nextOccurrence(spec, new Date("2026-01-01T09:59:59.999Z"))?.toISOString()).toBe(
      "2026-01-01T10:00:00.000Z",
    );
  });

  it("accepts six fields (seconds first) and macros", () => {
    const after = new Date("2026-01-01T00:00:00Z");
    expect(iso(nextOccurrences({ cron: "*/20 * * * * *", timezone: "UTC" }, after, 2))).toEqual([
      "2026-01-01T00:00:20.000Z",
      "2026-01-01T00:00:40.000Z",
    ]);
    expect(nextOccurrence({ cron: "@daily", timezone: "Asia/Tokyo" }, after)?.toISOString()).toBe(
      "2026-01-01T15:00:00.000Z",
    );
  });

  it("a compiled schedule gives the same answers as repeated calls", () => {
    const spec = { cron: "15 8 * * 1-5", timezone: BERLIN };
    const schedule = compileSchedule(spec);
    const from = new Date("2026-03-26T00:00:00Z");
    expect(schedule.next(from)?.toISOString()).toBe(nextOccurrence(spec, from)?.toISOString());
  });

  it("latestUpTo finds the shifted spring-forward occurrence (cron-parser's prev() alone misses it)", () => {
    const schedule = compileSchedule({ cron: "30 2 * * *", timezone: NY });
    expect(schedule.latestUpTo(new Date("2026-03-08T12:00:00Z"))?.toISOString()).toBe(
      "2026-03-08T07:30:00.000Z",
    );
    expect(schedule.latestUpTo(new Date("2026-03-08T07:30:00Z"))?.toISOString()).toBe(
      "2026-03-08T07:30:00.000Z",
    );
    expect(schedule.latestUpTo(new Date("2026-03-08T07:29:59Z"))?.toISOString()).toBe(
      "2026-03-07T07:30:00.000Z",
    );
  });

  it("occurrenceKey is <id>@<ISO UTC> and stable", () => {
    const date = new Date("2026-03-09T13:00:00Z");
    expect(occurrenceKey("digest", date)).toBe("digest@2026-03-09T13:00:00.000Z");
    expect(occurrenceKey("digest", new Date(date.getTime()))).toBe(occurrenceKey("digest", date));
  });
});

describe("validation errors", () => {
  function errorOf(fn: () => unknown): ScheduleError {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(ScheduleError);
      return err as ScheduleError;
    }
    throw new Error("expected a ScheduleError");
  }

  it.each([
    ["61 * * * *", 'cron "61 * * * *": minute 61 is out of range (0-59).'],
    ["0 24 * * *", 'cron "0 24 * * *": hour 24 is out of range (0-23).'],
    ["0 0 32 * *", 'cron "0 0 32 * *": day-of-month 32 is out of range (1-31).'],
    ["0 0 1 13 *", 'cron "0 0 1 13 *": month 13 is out of range (1-12).'],
    ["0 0 * * 8", 'cron "0 0 * * 8": day-of-week 8 is out of range (0-7).'],
    ["1-70 * * * *", 'cron "1-70 * * * *": minute range 1-70 is out of range (0-59).'],
    ["5-2 * * * *", 'cron "5-2 * * * *": minute range 5-2 runs backwards.'],
    ["61 * * * * *", 'cron "61 * * * * *": second 61 is out of range (0-59).'],
    ["*/0 * * * *", 'cron "*/0 * * * *": minute "*/0" is invalid (cannot repeat at every 0 time).'],
    ["x * * * *", 'cron "x * * * *": minute "x" is invalid (Invalid characters, got value: x).'],
    [
      "0 9 * * WEDS",
      'cron "0 9 * * WEDS": day-of-week "WEDS" is invalid (use the numbers 0-7 or the three-letter names SUN-SAT).',
    ],
    [
      "0 9 * * MON-FRIDAY",
      'cron "0 9 * * MON-FRIDAY": day-of-week "MON-FRIDAY" is invalid (use the numbers 0-7 or the three-letter names SUN-SAT).',
    ],
    [
      "0 9 1 JANUARY *",
      'cron "0 9 1 JANUARY *": month "JANUARY" is invalid (use the numbers 1-12 or the three-letter names JAN-DEC).',
    ],
    ["0 0 30 2 *", 'cron "0 0 30 2 *": the day-of-month and month fields never match (like 30 February).'],
    [
      "* * *",
      'cron "* * *": expected 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, or a macro like @daily; got 3.',
    ],
    ["", 'cron "": the expression is empty.'],
  ])("cron %j", (cron, message) => {
    const err = errorOf(() => nextOccurrences({ cron, timezone: "UTC" }, new Date(0), 1));
    expect(err.code).toBe("SCHEDULE_INVALID");
    expect(err.name).toBe("ScheduleError");
    expect(err.field).toBe("cron");
    expect(err.value).toBe(cron);
    expect(err.message).toBe(message);
  });

  it("rejects an unknown macro", () => {
    expect(errorOf(() => validateSchedule({ cron: "@reboot", timezone: "UTC" })).message).toBe(
      'cron "@reboot": unknown macro; use one of @yearly, @annually, @monthly, @weekly, @daily, @hourly, @minutely, @secondly, @weekdays, @weekends.',
    );
  });

  it.each(["Mars/Base", ""])("rejects time zone %j, naming the field and the config path", (tz) => {
    const err = errorOf(() => validateSchedule({ cron: "0 9 * * *", timezone: tz }, "bots.digest.schedule"));
    expect(err.field).toBe("timezone");
    expect(err.message).toBe(
      `bots.digest.schedule.timezone "${tz}" is not a known IANA time zone; use a name like "Europe/Berlin", "America/New_York" or "UTC".`,
    );
  });

  it("names the time zone a misspelt one is close to", () => {
    const err = errorOf(() =>
      validateSchedule({ cron: "0 9 * * *", timezone: "Europe/Berlim" }, "bots.digest.schedule"),
    );
    expect(err.message).toBe(
      'bots.digest.schedule.timezone "Europe/Berlim" is not a known IANA time zone; did you mean "Europe/Berlin"?',
    );
    expect(errorOf(() => validateSchedule({ cron: "0 9 * * *", timezone: "UTX" })).message).toMatch(
      /did you mean "UTC"\?$/,
    );
  });

  it('says a missing time zone is required, not that "undefined" is unknown', () => {
    const schedule = { cron: "0 9 * * *" } as unknown as { cron: string; timezone: string };
    const err = errorOf(() => validateSchedule(schedule, 'recurring("standup")'));
    expect(err.field).toBe("timezone");
    expect(err.message).toBe(
      'recurring("standup").timezone is required: the IANA time zone the cron is read in, such as "Europe/Berlin", "America/New_York" or "UTC".',
    );
  });

  // Node 22's and 24's Intl accept these and Node 20's refuses them: refused on every line.
  it.each([
    ["+02:00", ', or "Etc/GMT-2" for a fixed offset of +02:00.'],
    ["-0500", ', or "Etc/GMT+5" for a fixed offset of -0500.'],
    ["+14", ', or "Etc/GMT-14" for a fixed offset of +14.'],
    ["+00:00", ', or "UTC" for a fixed offset of +00:00.'],
    ["+05:30", "."],
    ["\u221203:00", ', or "Etc/GMT+3" for a fixed offset of \u221203:00.'],
  ])("rejects the UTC offset %j as a time zone, on every Node.js line", (tz, end) => {
    const err = errorOf(() => validateSchedule({ cron: "0 9 * * *", timezone: tz }, "bots.digest.schedule"));
    expect(err.field).toBe("timezone");
    expect(err.value).toBe(tz);
    expect(err.message).toBe(
      `bots.digest.schedule.timezone "${tz}" is a UTC offset, not an IANA time zone; use a name like "Europe/Berlin", which follows daylight saving time${end}`,
    );
  });

  it("accepts a fixed-offset Etc name", () => {
    expect(
      iso(nextOccurrences({ cron: "0 9 * * *", timezone: "Etc/GMT-2" }, new Date("2026-06-01T00:00:00Z"), 1)),
    ).toEqual(["2026-06-01T07:00:00.000Z"]);
  });

  it("names the config path for a cron error too", () => {
    expect(errorOf(() => validateSchedule({ cron: "61 * * * *", timezone: "UTC" }, "jobs[2]")).message).toBe(
      'jobs[2].cron "61 * * * *": minute 61 is out of range (0-59).',
    );
  });
});
