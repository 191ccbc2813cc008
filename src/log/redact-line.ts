/**
 * Secrets out of a finished JSON log line: the value of every key named like a secret, at any
 * depth, becomes "[redacted]". It runs on the line pino has built (errors already serialized), so
 * a line without such a key costs one regular-expression test and no copy of the logged object.
 */

/** Keys whose values are secrets wherever they appear. */
export const secretKeys = [
  "api_key",
  "apiKey",
  "key",
  "token",
  "secret",
  "password",
  "authorization",
  "Authorization",
  "webhook_secret",
] as const;

const CENSOR = '"[redacted]"';
// A key is a JSON string right before a colon: quotes inside string values are escaped, so this
// never matches text inside a value.
const secretKey = new RegExp(`"(?:${secretKeys.join("|")})":`, "g");

/** `line` with the value of every secret key replaced by "[redacted]". */
export function redactLine(line: string): string {
  secretKey.lastIndex = 0;
  if (!secretKey.test(line)) return line;
  secretKey.lastIndex = 0;
  let out = "";
  let from = 0;
  for (let match = secretKey.exec(line); match !== null; match = secretKey.exec(line)) {
    const valueAt = match.index + match[0].length;
    if (valueAt < from) continue;
    const end = valueEnd(line, valueAt);
    out += line.slice(from, valueAt) + CENSOR;
    from = end;
    secretKey.lastIndex = end;
  }
  return out + line.slice(from);
}

/** Where the JSON value starting at `at` ends (exclusive). */
function valueEnd(text: string, at: number): number {
  let depth = 0;
  let i = at;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      i = stringEnd(text, i);
      if (depth === 0) return i;
      continue;
    }
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      if (depth === 0) return i; // the end of the object holding a primitive value
      depth--;
      if (depth === 0) return i + 1;
    } else if (c === "," && depth === 0) return i;
    i++;
  }
  return i;
}

/** The index after the closing quote of the string whose opening quote is at `at`. */
function stringEnd(text: string, at: number): number {
  let i = at + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === "\\") i += 2;
    else if (c === '"') return i + 1;
    else i++;
  }
  return i;
}
