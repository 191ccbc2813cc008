/**
 * The embedded store's files read as their writers lay them out (`recordLine`, `snapshotText` in
 * _journal.ts), without parsing every value only to turn it back into text: each value's text is
 * taken as written and checked to be JSON where it lies in the file (_json-check.ts), its key and
 * expiry on their own. A start with 10,000 waiting dialogs reads some 10 MB of them: parsing the
 * whole snapshot, then stringifying each value again, was most of what that start spent on its
 * state. A file laid out otherwise (edited by hand, damaged) gives `undefined`: the caller parses
 * it whole, as before.
 */
import { isJsonText } from "./_json-check.ts";
import type { TableEntry } from "./_view.ts";

export interface FramedEntry {
  key: string;
  entry: TableEntry;
}

const SET_RECORD = Buffer.from('{"op":"set","key":');
const LOG_VALUE = Buffer.from(',"value":');
const SNAPSHOT_HEAD = Buffer.from('{"format":"bothost-state-snapshot","version":1,"generation":');
const SNAPSHOT_ENTRIES = Buffer.from(',"entries":{');
const SNAPSHOT_VALUE = Buffer.from(':{"value":');
const EXPIRES = Buffer.from(',"expiresAt":');
/** A JSON number, as `${expiresAt}` writes one. */
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
/** The bytes a JSON number is made of. */
const NUMBER_BYTES = new Set(Buffer.from("0123456789+-.eE"));
const CLOSE = 0x7d; // }
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const NEWLINE = 0x0a;

/** A log line `bytes[from, to)` (no "\n") that sets a key, as `recordLine` writes it. */
export function framedRecord(bytes: Buffer, from: number, to: number): FramedEntry | undefined {
  if (to - from <= SET_RECORD.length || !holdsAt(bytes, from, SET_RECORD)) return undefined;
  return framedEntry(bytes, from + SET_RECORD.length, to, LOG_VALUE);
}

/**
 * A snapshot laid out as `snapshotText` writes it: the header and the first entry on the first
 * line, then one entry a line, each but the last followed by ",", the last by "}}".
 */
export function framedSnapshot(
  bytes: Buffer,
): { generation: number; entries: Array<[string, TableEntry]> } | undefined {
  const last = bytes.length - 3;
  if (last < SNAPSHOT_HEAD.length || bytes.toString("latin1", last) !== "}}\n") return undefined;
  if (!holdsAt(bytes, 0, SNAPSHOT_HEAD)) return undefined;
  const open = bytes.indexOf(SNAPSHOT_ENTRIES, SNAPSHOT_HEAD.length);
  if (open < 0) return undefined;
  const digits = bytes.toString("latin1", SNAPSHOT_HEAD.length, open);
  const generation = Number(digits);
  if (!/^(0|[1-9]\d*)$/.test(digits) || !Number.isSafeInteger(generation)) return undefined;
  const entries: Array<[string, TableEntry]> = [];
  let from = open + SNAPSHOT_ENTRIES.length;
  if (from > last) return undefined;
  while (from < last) {
    const nl = bytes.indexOf(NEWLINE, from);
    const end = nl < 0 || nl > last ? last : nl;
    // Entries are separated by ",\n"; the last one ends the entries.
    if (end < last && bytes[end - 1] !== COMMA) return undefined;
    const entry = framedEntry(bytes, from, end < last ? end - 1 : end, SNAPSHOT_VALUE);
    if (entry === undefined) return undefined;
    entries.push([entry.key, entry.entry]);
    from = end < last ? end + 1 : last;
    if (from === last && end < last) return undefined; // a "," with no entry after it
  }
  return { generation, entries };
}

/**
 * `<key>` `marker` `<value>` (`,"expiresAt":<ms>`) `}` at `bytes[from, to)`. The key ends at the
 * first `marker`: a JSON string cannot hold one (each `"` in it is escaped). The expiry cannot be
 * part of the value: a value ending in digits is a number, and a number holds no `,`.
 */
function framedEntry(bytes: Buffer, from: number, to: number, marker: Buffer): FramedEntry | undefined {
  if (bytes[to - 1] !== CLOSE) return undefined;
  const keyEnd = bytes.indexOf(marker, from);
  if (keyEnd < 0 || keyEnd + marker.length >= to) return undefined;
  const key = keyAt(bytes, from, keyEnd);
  if (key === undefined) return undefined;
  const start = keyEnd + marker.length;
  let end = to - 1;
  let expiresAt: number | undefined;
  let digits = end;
  while (digits > start && NUMBER_BYTES.has(bytes[digits - 1]!)) digits--;
  const expiry = digits - EXPIRES.length;
  if (digits < end && expiry > start && holdsAt(bytes, expiry, EXPIRES)) {
    const ms = bytes.toString("latin1", digits, end);
    if (!NUMBER.test(ms)) return undefined;
    expiresAt = Number(ms);
    end = expiry;
  }
  // As the writer lays it out: no space around the value.
  if (isSpace(bytes[start]) || isSpace(bytes[end - 1]) || !isJsonText(bytes, start, end)) return undefined;
  // Decoded on its own: a slice of the file's text would keep all of it alive.
  const text = bytes.toString("utf8", start, end);
  return { key, entry: expiresAt === undefined ? { text } : { text, expiresAt } };
}

/** The JSON string at `bytes[from, to)`; one without escapes is taken as it is (most keys). */
function keyAt(bytes: Buffer, from: number, to: number): string | undefined {
  let plain = bytes[from] === QUOTE && bytes[to - 1] === QUOTE && to - from >= 2;
  for (let i = from + 1; plain && i < to - 1; i++) {
    const b = bytes[i]!;
    plain = b !== QUOTE && b !== BACKSLASH && b >= 0x20;
  }
  if (plain) return bytes.toString("utf8", from + 1, to - 1);
  const key = parsed(bytes.toString("utf8", from, to));
  return typeof key === "string" ? key : undefined;
}

/** Whether `b` is a byte JSON takes as whitespace. */
function isSpace(b: number | undefined): boolean {
  return b === 0x20 || b === NEWLINE || b === 0x0d || b === 0x09;
}

/** Whether `bytes` holds `pattern` at `at`. */
function holdsAt(bytes: Buffer, at: number, pattern: Buffer): boolean {
  if (at + pattern.length > bytes.length) return false;
  for (let i = 0; i < pattern.length; i++) if (bytes[at + i] !== pattern[i]) return false;
  return true;
}

const NOT_JSON = Symbol("not JSON");

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}
