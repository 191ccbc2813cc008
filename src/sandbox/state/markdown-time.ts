/**
 * The instant of a `<time:…>` as the server finds it: its date parser (python-dateutil, with the
 * server's time zone abbreviations) first, then Unix seconds. This is that parser's way of reading
 * tokens, for the forms people and bots write: ISO dates and times, month names, ordinal days,
 * weekdays, 12- and 24-hour times, zones by name or offset. Undefined when the server would refuse
 * the text, or when it takes a form left out here (durations such as `10h30` or `5 minutes`).
 */
import { daysIn, Failed, type Found, fail, fullYear, read, tokens, UTC_NAMES } from "./markdown-time-read.ts";

/** The zone abbreviations the server's parser knows, east of UTC in seconds. */
const ZONES: Record<string, number> = {
  SST: -39600,
  HST: -36000,
  AKST: -32400,
  HDT: -32400,
  AKDT: -28800,
  PST: -28800,
  MST: -25200,
  PDT: -25200,
  CST: -21600,
  MDT: -21600,
  CDT: -18000,
  EST: -18000,
  AST: -14400,
  EDT: -14400,
  NST: -12600,
  ADT: -10800,
  NDT: -9000,
  GMT: 0,
  UTC: 0,
  WET: 0,
  BST: 3600,
  CET: 3600,
  MET: 3600,
  WAT: 3600,
  WEST: 3600,
  CAT: 7200,
  CEST: 7200,
  EET: 7200,
  MEST: 7200,
  SAST: 7200,
  EAT: 10800,
  EEST: 10800,
  IDT: 10800,
  MSK: 10800,
  PKT: 18000,
  IST: 19800,
  WIB: 25200,
  AWST: 28800,
  HKT: 28800,
  WITA: 28800,
  JST: 32400,
  KST: 32400,
  WIT: 32400,
  ACST: 34200,
  AEST: 36000,
  ChST: 36000,
  ACDT: 37800,
  AEDT: 39600,
  NZST: 43200,
  NZDT: 46800,
};
/**
 * The instant `written` names, as the server writes it (`2017-06-05T22:30:00Z`), or undefined
 * when the server would show a timestamp error. Parts it leaves out come from `now`'s date in
 * UTC (the server's default, with time 00:00:00); a weekday without a day is the next such day.
 */
export function timeOf(written: string, now: number): string | undefined {
  try {
    return format(build(read(tokens(written), new Date(now).getUTCFullYear()), now));
  } catch (error) {
    if (!(error instanceof Failed)) throw error;
  }
  return unixSeconds(written);
}

/** The instant (ms) and microseconds of what was read; fails where the server's parser does. */
function build(f: Found, now: number): { ms: number; micro: number } {
  const set = [f.hour, f.minute, f.second, f.weekday, f.zone, f.offset, ...f.ymd.values];
  if (set.every((x) => x === undefined)) fail();
  const [y, m, d] = f.ymd.resolve();
  const today = new Date(now);
  const year =
    y === undefined ? today.getUTCFullYear() : fullYear(y, f.ymd.centurySaid, today.getUTCFullYear());
  const month = m ?? today.getUTCMonth() + 1;
  let day = d ?? Math.min(today.getUTCDate(), daysIn(year, month));
  const [hour, minute, second] = [f.hour ?? 0, f.minute ?? 0, f.second ?? 0];
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) fail();
  if (hour > 23 || minute > 59 || second > 59) fail();
  if (f.weekday !== undefined && d === undefined) {
    const weekday = (new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7;
    day += (f.weekday - weekday + 7) % 7;
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  // A zone the server names keeps its offset; UTC's names are UTC whatever offset follows them.
  const named = f.zone !== undefined && Object.hasOwn(ZONES, f.zone) ? ZONES[f.zone] : undefined;
  const offset = named ?? (f.zone !== undefined && UTC_NAMES.has(f.zone) ? 0 : (f.offset ?? 0));
  if (Math.abs(offset) >= 86400) fail();
  return { ms: date.getTime() - offset * 1000, micro: f.micro ?? 0 };
}

/** The server's fallback: a number of seconds since the epoch, as Python's float() reads it. */
function unixSeconds(written: string): string | undefined {
  const text = written.trim().replaceAll(/(?<=\d)_(?=\d)/g, "");
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i.test(text)) return undefined;
  const value = Number(text);
  const whole = Math.floor(value);
  const micro = Math.round((value - whole) * 1e6);
  if (Math.abs(whole) > 253402300799) return undefined;
  return format(micro === 1e6 ? { ms: (whole + 1) * 1000, micro: 0 } : { ms: whole * 1000, micro });
}

function format({ ms, micro }: { ms: number; micro: number }): string | undefined {
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  if (!Number.isFinite(ms) || year < 1 || year > 9999) return undefined;
  const iso = date.toISOString().slice(0, 19);
  return `${iso}${micro > 0 ? `.${String(micro).padStart(6, "0")}` : ""}Z`;
}
