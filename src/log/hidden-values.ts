/**
 * Secret values (the config's keys, tokens and passwords) out of a finished JSON log line, wherever
 * they were quoted: an error's message or stack ("Request cannot be constructed from a URL that
 * includes credentials: https://deploy:…@host"), a field holding an error's words. Keys named like
 * a secret are redact-line.ts's; this finds the values themselves, whatever key holds them.
 *
 * One pass over the line: inside its strings, each position's first two characters are looked up
 * among the values' own, so the cost does not grow with the number of values (a thousand bots'
 * keys). Only text inside JSON strings is replaced, so the line stays JSON.
 */

const CENSOR = "[redacted]";
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const U = 0x75;
/** As config/secrets.ts's redact: shorter values would blank out ordinary words. */
const MIN_LENGTH = 4;

export class HiddenValues {
  /** The values as written inside a JSON string, by their first two characters, longest first. */
  readonly #byHead = new Map<number, string[]>();

  /** Hides `values` (besides those added before) from every line from now on. */
  add(values: Iterable<string>): void {
    for (const value of values) {
      if (value.length < MIN_LENGTH) continue;
      const escaped = JSON.stringify(value).slice(1, -1);
      const head = headAt(escaped, 0);
      const list = this.#byHead.get(head) ?? [];
      if (list.includes(escaped)) continue;
      list.push(escaped);
      list.sort((a, b) => b.length - a.length);
      this.#byHead.set(head, list);
    }
  }

  /** `line` (one JSON line) with every hidden value inside its strings replaced by [redacted]. */
  redact(line: string): string {
    if (this.#byHead.size === 0) return line;
    let out = "";
    let from = 0;
    let inString = false;
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      if (!inString) {
        if (c === QUOTE) inString = true;
        continue;
      }
      const hit = this.#byHead.get(headAt(line, i))?.find((value) => line.startsWith(value, i));
      if (hit !== undefined) {
        out += line.slice(from, i) + CENSOR;
        from = i + hit.length;
        i = from - 1;
      } else if (c === QUOTE) inString = false;
      // An escape is passed whole: a value is never matched from inside one (\n, \u001b).
      else if (c === BACKSLASH) i += line.charCodeAt(i + 1) === U ? 5 : 1;
    }
    return from === 0 ? line : out + line.slice(from);
  }
}

/** The two UTF-16 units at `at` as one number (past the end, NaN: no value's head, all being 4+ long). */
function headAt(text: string, at: number): number {
  return text.charCodeAt(at) * 0x10000 + text.charCodeAt(at + 1);
}
