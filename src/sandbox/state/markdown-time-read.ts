/**
 * The reading of a date and time that the server's `<time:…>` uses (python-dateutil's parser, not
 * day first, not year first), for the forms markdown-time.ts describes: tokens, then year, month,
 * day, time and zone as that parser settles them. A text it would refuse fails (throws `Failed`).
 */
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const MONTH_NAMES = "january february march april may june july august september october november december";
const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const WEEKDAY_NAMES = "monday tuesday wednesday thursday friday saturday sunday";
/** Tokens the parser passes over between the parts of a date. */
const SKIPPED = new Set([
  " ",
  ".",
  ",",
  ";",
  "-",
  "/",
  "'",
  "at",
  "on",
  "and",
  "ad",
  "m",
  "t",
  "of",
  "st",
  "nd",
  "rd",
  "th",
]);
const UNITS = new Set(["h", "hour", "hours", "m", "minute", "minutes", "s", "second", "seconds"]);
export const UTC_NAMES = new Set(["UTC", "GMT", "Z", "z"]);

function monthOf(token: string): number | undefined {
  const t = token.toLowerCase();
  const at = MONTHS.indexOf(t === "sept" ? "sep" : t);
  if (at >= 0) return at + 1;
  const full = MONTH_NAMES.split(" ").indexOf(t);
  return full >= 0 ? full + 1 : undefined;
}

function weekdayOf(token: string): number | undefined {
  const t = token.toLowerCase();
  const at = WEEKDAYS.indexOf(t);
  if (at >= 0) return at;
  const full = WEEKDAY_NAMES.split(" ").indexOf(t);
  return full >= 0 ? full : undefined;
}

/** 0 for am, 12 for pm. */
function meridiemOf(token: string): number | undefined {
  const t = token.toLowerCase();
  return t === "am" || t === "a" ? 0 : t === "pm" || t === "p" ? 12 : undefined;
}

/**
 * Words, numbers and single other characters, as the parser cuts them: a number may hold one
 * decimal point, or a decimal comma after two digits or more ("30,5" is 30.5); with more points, or
 * one at its end, the points are tokens of their own.
 */
export function tokens(text: string): string[] {
  const out: string[] = [];
  for (const [token] of text.matchAll(/[A-Za-z]+|\d{2,},[\d.]*|\d+(?:\.[\d.]*)?|[\s\S]/g)) {
    if (/^\d/.test(token) && (/[.,]$/.test(token) || /\..*\./.test(token)))
      out.push(...token.split(/([.,])/).filter((part) => part !== ""));
    else if (/^\d+,\d+$/.test(token)) out.push(token.replace(",", "."));
    else if (/^\d/.test(token) && token.includes(",")) fail();
    else out.push(/^\s$/.test(token) ? " " : token);
  }
  return out;
}

export class Failed extends Error {}
export const fail = (): never => {
  throw new Failed();
};

/** Year, month and day values in the order written, with which of them are known for what. */
class Ymd {
  values: number[] = [];
  yearAt?: number;
  monthAt?: number;
  centurySaid = false;
  /** `written` is a number's digits (more than two make it a year) or its value (above 100, too). */
  add(written: string | number, label?: "Y" | "M"): void {
    const value = Number(written);
    if (!Number.isFinite(value) || (typeof written === "string" && !/^\d+$/.test(written))) fail();
    if ((typeof written === "string" && written.length > 2) || (typeof written === "number" && value > 100)) {
      this.centurySaid = true;
      label = "Y";
    }
    this.values.push(Math.trunc(value));
    if ((label === "Y" && this.yearAt !== undefined) || (label === "M" && this.monthAt !== undefined)) fail();
    if (label === "Y") this.yearAt = this.values.length - 1;
    if (label === "M") this.monthAt = this.values.length - 1;
  }
  couldBeDay(value: number): boolean {
    if (this.monthAt === undefined) return value >= 1 && value <= 31;
    const year = this.yearAt === undefined ? 2000 : this.values[this.yearAt]!;
    return value >= 1 && value <= daysIn(year, this.values[this.monthAt]!);
  }
  /** [year, month, day] as the parser settles them (not day first, not year first). */
  resolve(): (number | undefined)[] {
    const v = this.values;
    const known = [this.yearAt, this.monthAt].filter((x) => x !== undefined).length;
    if (v.length > 3) fail();
    if (known > 0 && (v.length === known || (v.length === 3 && known === 2))) {
      const dayAt = [0, 1, 2].find((x) => x !== this.yearAt && x !== this.monthAt && x < v.length);
      return [this.yearAt, this.monthAt, dayAt].map((x) => (x === undefined ? undefined : v[x]));
    }
    const m = this.monthAt;
    if (v.length === 1 || (m !== undefined && v.length === 2)) {
      const other = m === undefined ? v[0]! : v[m === 0 ? 1 : 0]!;
      const month = m === undefined ? undefined : v[m];
      if (v.length > 1 || m === undefined)
        return other > 31 ? [other, month, undefined] : [undefined, month, other];
      return [undefined, month, undefined];
    }
    if (v.length === 2) {
      const [a, b] = v as [number, number];
      return a > 31 ? [a, b, undefined] : b > 31 ? [b, a, undefined] : [undefined, a, b];
    }
    if (v.length === 3) {
      const [a, b, c] = v as [number, number, number];
      if (m === 0) return b > 31 ? [b, a, c] : [c, a, b];
      if (m === 1) return a > 31 ? [a, b, c] : [c, b, a];
      if (m === 2) return b > 31 ? [b, c, a] : [a, c, b];
      if (a > 31 || this.yearAt === 0) return [a, b, c];
      return a > 12 ? [c, b, a] : [c, a, b];
    }
    return [undefined, undefined, undefined];
  }
}

export function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate() || 31;
}

export interface Found {
  ymd: Ymd;
  hour?: number;
  minute?: number;
  second?: number;
  micro?: number;
  meridiem?: number;
  weekday?: number;
  zone?: string;
  /** East of UTC, in seconds. */
  offset?: number;
}

/** Reads the tokens of a date and time as the server's parser does; two-digit years near `thisYear`. */
export function read(t: string[], thisYear: number): Found {
  const f: Found = { ymd: new Ymd() };
  const isUnit = (i: number) => i >= 0 && i < t.length && UNITS.has(t[i]!.toLowerCase());
  const skipped = (token: string | undefined) => token !== undefined && SKIPPED.has(token.toLowerCase());
  const int = (token: string | undefined) =>
    token !== undefined && /^\d+$/.test(token) ? Number(token) : fail();
  for (let i = 0; i < t.length; i++) {
    const token = t[i]!;
    if (/^\d/.test(token)) i = number(t, i, f, skipped, int, isUnit);
    else if (weekdayOf(token) !== undefined) f.weekday = weekdayOf(token);
    else if (monthOf(token) !== undefined) {
      f.ymd.add(monthOf(token)!, "M");
      const sep = t[i + 1];
      if (sep === "-" || sep === "/") {
        f.ymd.add(t[i + 2] ?? fail());
        if (t[i + 3] === sep) {
          f.ymd.add(t[i + 4] ?? fail());
          i += 2;
        }
        i += 2;
      } else if (
        t[i + 1] === " " &&
        t[i + 3] === " " &&
        t[i + 2]?.toLowerCase() === "of" &&
        t[i + 4] !== undefined
      ) {
        if (/^\d+$/.test(t[i + 4]!)) f.ymd.add(String(fullYear(Number(t[i + 4]), false, thisYear)), "Y");
        i += 4;
      }
    } else if (meridiemOf(token) !== undefined) {
      if (f.hour === undefined || f.hour > 12) fail();
      f.hour = (f.hour! % 12) + meridiemOf(token)!;
      f.meridiem = meridiemOf(token);
    } else if (
      f.hour !== undefined &&
      f.zone === undefined &&
      f.offset === undefined &&
      token.length <= 5 &&
      (/^[A-Z]+$/.test(token) || UTC_NAMES.has(token))
    ) {
      f.zone = token;
      f.offset = UTC_NAMES.has(token) ? 0 : undefined;
      if (t[i + 1] === "+" || t[i + 1] === "-") {
        // "GMT+3" is the zone whose clock plus three hours is GMT: three hours west.
        t[i + 1] = t[i + 1] === "+" ? "-" : "+";
        f.offset = undefined;
        if (UTC_NAMES.has(token)) f.zone = undefined;
      }
    } else if (f.hour !== undefined && (token === "+" || token === "-")) {
      const sign = token === "+" ? 1 : -1;
      const next = t[i + 1] ?? fail();
      if (next.length === 4) f.offset = sign * (int(next.slice(0, 2)) * 3600 + int(next.slice(2)) * 60);
      else if (t[i + 2] === ":") {
        f.offset = sign * (int(next) * 3600 + int(t[i + 3]) * 60);
        i += 2;
      } else if (next.length <= 2) f.offset = sign * int(next) * 3600;
      else fail();
      i += 1;
    } else if (!skipped(token)) fail();
  }
  return f;
}

/** A number token at `t[i]`: part of a date, an hour (and more), or a compact date and time. */
function number(
  t: string[],
  i: number,
  f: Found,
  skipped: (token: string | undefined) => boolean,
  int: (token: string | undefined) => number,
  isUnit: (i: number) => boolean,
): number {
  const s = t[i]!;
  const value = Number(s);
  const next = t[i + 1];
  if (
    f.ymd.values.length === 3 &&
    (s.length === 2 || s.length === 4) &&
    f.hour === undefined &&
    (next === undefined || (next !== ":" && !isUnit(i + 1)))
  ) {
    f.hour = int(s.slice(0, 2));
    if (s.length === 4) f.minute = int(s.slice(2));
  } else if (s.length === 6 || (s.length > 6 && s.indexOf(".") === 6)) {
    if (f.ymd.values.length === 0 && !s.includes("."))
      for (const at of [0, 2, 4]) f.ymd.add(s.slice(at, at + 2));
    else {
      f.hour = int(s.slice(0, 2));
      f.minute = int(s.slice(2, 4));
      seconds(f, s.slice(4));
    }
  } else if (s.length === 8 || s.length === 12 || s.length === 14) {
    f.ymd.add(s.slice(0, 4), "Y");
    f.ymd.add(s.slice(4, 6));
    f.ymd.add(s.slice(6, 8));
    if (s.length > 8) [f.hour, f.minute] = [int(s.slice(8, 10)), int(s.slice(10, 12))];
    if (s.length > 12) f.second = int(s.slice(12));
  } else if (
    isUnit(i + 1) ||
    (next === " " && isUnit(i + 2)) ||
    isUnit(i - 1) ||
    (i === t.length - 1 && t[i - 1] === " " && isUnit(i - 2))
  )
    fail(); // a duration-like "10h30" or "5 minutes": not read here
  else if (next === ":" && i + 2 < t.length) {
    f.hour = Math.trunc(value);
    // Minutes may have a fraction (of seconds); a later "H:MM" drops the seconds an earlier one gave.
    const minutes = /^\d+(\.\d*)?$/.test(t[i + 2]!) ? Number(t[i + 2]) : fail();
    f.minute = Math.trunc(minutes);
    f.second = minutes % 1 > 0 ? Math.trunc(60 * (minutes % 1)) : undefined;
    if (t[i + 3] === ":" && i + 4 < t.length) {
      seconds(f, t[i + 4]!);
      i += 2;
    }
    i += 2;
  } else if (next === "-" || next === "/" || next === ".") {
    f.ymd.add(s);
    const second = t[i + 2];
    if (second !== undefined && !skipped(second)) {
      if (/^\d+$/.test(second)) f.ymd.add(second);
      else f.ymd.add(monthOf(second) ?? fail(), "M");
      if (t[i + 3] === next) {
        const third = t[i + 4] ?? fail();
        if (monthOf(third) !== undefined) f.ymd.add(monthOf(third)!, "M");
        else f.ymd.add(/^\d+$/.test(third) ? third : fail());
        i += 2;
      }
      i += 1;
    }
    i += 1;
  } else if (next === undefined || skipped(next)) {
    const after = t[i + 2];
    if (after !== undefined && meridiemOf(after) !== undefined) {
      f.hour = ampm(Math.trunc(value), meridiemOf(after)!);
      f.meridiem = meridiemOf(after);
      i += 1;
    } else f.ymd.add(value);
    i += 1;
  } else if (meridiemOf(next) !== undefined && value >= 0 && value < 24) {
    f.hour = ampm(Math.trunc(value), meridiemOf(next)!);
    f.meridiem = meridiemOf(next);
    i += 1;
  } else if (f.ymd.couldBeDay(value)) f.ymd.add(value);
  else fail();
  return i;
}

function ampm(hour: number, meridiem: number): number {
  return hour < 12 && meridiem === 12 ? hour + 12 : hour === 12 && meridiem === 0 ? 0 : hour;
}

/** Seconds, with a fraction as microseconds ("05.25" is 5 s 250000 µs). */
function seconds(f: Found, s: string): void {
  const [whole, fraction] = s.split(".");
  f.second = int2(whole);
  f.micro = fraction === undefined ? 0 : int2(fraction.padEnd(6, "0").slice(0, 6));
}

function int2(s: string | undefined): number {
  return s !== undefined && /^\d+$/.test(s) ? Number(s) : fail();
}

/** A two-digit year as the parser takes it: the one within 50 years of `thisYear`. */
export function fullYear(year: number, centurySaid: boolean, thisYear: number): number {
  if (year >= 100 || centurySaid) return year;
  let full = year + Math.floor(thisYear / 100) * 100;
  if (full >= thisYear + 50) full -= 100;
  else if (full < thisYear - 50) full += 100;
  return full;
}
