/**
 * Whether bytes are one JSON text, checked without building it: the embedded store reads its
 * files a value at a time (_framed.ts), and a value's text is only kept, not used, until a key is
 * read. `JSON.parse` made every value of a 10 MB state into objects only to throw them away; this
 * walks the bytes once and allocates nothing but its nesting stack. It is never looser than
 * `JSON.parse` (test/state/json-check.test.ts holds it to it): a text it accepts parses.
 */

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** What may follow a backslash in a string (`u` is checked apart). */
const ESCAPES = new Set(Buffer.from('"\\/bfnrt'));
const LITERALS = [Buffer.from("true"), Buffer.from("false"), Buffer.from("null")];

/** Whether `bytes[from, to)` is exactly one JSON value, with whitespace around it at most. */
export function isJsonText(bytes: Uint8Array, from: number, to: number): boolean {
  // The open containers, innermost last: true for an object.
  const open: boolean[] = [];
  let i = skipSpace(bytes, from, to);
  for (;;) {
    // A value at `i`.
    if (i >= to) return false;
    const b = bytes[i];
    if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      const object = b === OPEN_OBJECT;
      i = skipSpace(bytes, i + 1, to);
      if (i < to && bytes[i] === (object ? CLOSE_OBJECT : CLOSE_ARRAY)) i++;
      else {
        open.push(object);
        if (object) {
          i = key(bytes, i, to);
          if (i < 0) return false;
        }
        continue;
      }
    } else if (b === QUOTE) i = string(bytes, i, to);
    else if (b === MINUS || (b !== undefined && b >= ZERO && b <= NINE)) i = number(bytes, i, to);
    else i = literal(bytes, i, to);
    if (i < 0) return false;
    // After a value: the next one of its container, or the container's end (as many as end here).
    for (;;) {
      i = skipSpace(bytes, i, to);
      if (open.length === 0) return i === to;
      if (i >= to) return false;
      const object = open[open.length - 1] as boolean;
      const c = bytes[i];
      if (c === COMMA) {
        i = skipSpace(bytes, i + 1, to);
        if (object) {
          i = key(bytes, i, to);
          if (i < 0) return false;
        }
        break;
      }
      if (c !== (object ? CLOSE_OBJECT : CLOSE_ARRAY)) return false;
      open.pop();
      i++;
    }
  }
}

/** `"key" :` at `i`, and the space after it: where its value begins, or -1. */
function key(bytes: Uint8Array, i: number, to: number): number {
  if (i >= to || bytes[i] !== QUOTE) return -1;
  i = skipSpace(bytes, string(bytes, i, to), to);
  if (i < 0 || i >= to || bytes[i] !== COLON) return -1;
  return skipSpace(bytes, i + 1, to);
}

function skipSpace(bytes: Uint8Array, i: number, to: number): number {
  if (i < 0) return i;
  while (i < to) {
    const b = bytes[i];
    if (b !== SPACE && b !== LF && b !== CR && b !== TAB) break;
    i++;
  }
  return i;
}

/** The end of the string that opens at `i`, or -1. */
function string(bytes: Uint8Array, i: number, to: number): number {
  for (i++; i < to; i++) {
    const b = bytes[i] as number;
    if (b === QUOTE) return i + 1;
    if (b < SPACE) return -1;
    if (b !== BACKSLASH) continue;
    if (++i >= to) return -1;
    const e = bytes[i] as number;
    if (e === 0x75) {
      if (i + 4 >= to) return -1;
      for (let k = 0; k < 4; k++) if (!isHex(bytes[++i] as number)) return -1;
    } else if (!ESCAPES.has(e)) return -1;
  }
  return -1;
}

function isHex(b: number): boolean {
  return (b >= ZERO && b <= NINE) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
}

/** The end of the number at `i` (`-? (0 | [1-9] digits) (. digits)? ([eE] [+-]? digits)?`), or -1. */
function number(bytes: Uint8Array, i: number, to: number): number {
  if (bytes[i] === MINUS) i++;
  if (i < to && bytes[i] === ZERO) i++;
  else {
    const start = i;
    i = digits(bytes, i, to);
    if (i === start) return -1;
  }
  if (i < to && bytes[i] === DOT) {
    const start = ++i;
    i = digits(bytes, i, to);
    if (i === start) return -1;
  }
  const e = i < to ? bytes[i] : undefined;
  if (e === 0x65 || e === 0x45) {
    i++;
    if (i < to && (bytes[i] === PLUS || bytes[i] === MINUS)) i++;
    const start = i;
    i = digits(bytes, i, to);
    if (i === start) return -1;
  }
  return i;
}

function digits(bytes: Uint8Array, i: number, to: number): number {
  while (i < to) {
    const b = bytes[i] as number;
    if (b < ZERO || b > NINE) break;
    i++;
  }
  return i;
}

/** The end of `true`, `false` or `null` at `i`, or -1. */
function literal(bytes: Uint8Array, i: number, to: number): number {
  for (const word of LITERALS) {
    if (i + word.length > to) continue;
    let k = 0;
    while (k < word.length && bytes[i + k] === word[k]) k++;
    if (k === word.length) return i + k;
  }
  return -1;
}
