/**
 * The embedded store's check that a value's bytes are JSON (src/state/_json-check.ts) against
 * `JSON.parse`, the judge it must never be looser than: every text of a set that covers the
 * grammar's edges, and texts made by changing one byte of real values (a damaged file).
 */
import { describe, expect, it } from "vitest";
import { isJsonText } from "../../src/state/_json-check.ts";

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** Checked where it lies among other bytes, as in a file: nothing past `to` may count. */
const checked = (text: string) => {
  const before = '1.5e{["\\';
  const bytes = Buffer.from(`${before}${text}0.5e+1}]`);
  const from = before.length;
  return isJsonText(bytes, from, from + Buffer.byteLength(text));
};

const EDGES = [
  ..."0 -0 12 -12.5e-3 1E+2 1e5 0.0 9007199254740993 01 - 1. .5 1e 1e+ +1 --1 0x1 1.e1 Infinity NaN".split(
    " ",
  ),
  ...[
    '""',
    '"a"',
    '"\\"\\\\\\/\\b\\f\\n\\r\\t"',
    '"\\u00e9\\uD83D\\uDE00"',
    '"é😀"',
    '"\\x"',
    '"\\u12"',
    '"\\u12G4"',
    '"\t"',
    '"\u0001"',
    '"\u2028"',
    '"a',
    '"\\"',
    "'a'",
  ],
  ..."true false null nul truex True nulll".split(" "),
  ...[
    "[]",
    "{}",
    "[[[]]]",
    "[1,2]",
    "[1,]",
    "[,1]",
    "[1 2]",
    '{"a":1}',
    '{"a":1,}',
    '{"a" 1}',
    "{1:2}",
    '{"a":}',
    '{"a":[{"b":null}],"c":{}}',
    "[",
    "]",
    "{",
    "}",
    '{"a":1}}',
    "[1]]",
  ],
  ...[" 1 ", "\n[1]\t", " ", "", "1 2", "[1]\r\n"],
];

describe("isJsonText", () => {
  it("agrees with JSON.parse on the grammar's edges", () => {
    for (const text of EDGES) expect([text, checked(text)]).toEqual([text, parses(text)]);
  });

  it("agrees with JSON.parse on real values with one byte changed, added or taken away", () => {
    const values = [
      {
        v: 2,
        id: "35614",
        userName: "Mel Member",
        answered: [35620, 35622],
        seq: 3,
        deadline: 1.79e12,
        last: "l8k",
      },
      [{ t: "ask", step: 1, text: 'And today?\n— "quoted"', msg: null, react: { check: "approve" } }],
      { n: 1, kind: "send", result: { id: 35620 }, fp: "ask:#1", begun: -0.5 },
    ].map((v) => JSON.stringify(v));
    const bytes = Buffer.from('{}[]":,0123456789-+.eE \n\\utrfnalsx');
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let valid = 0;
    for (let i = 0; i < 20_000; i++) {
      const text = values[i % values.length] as string;
      const at = next(text.length);
      const c = String.fromCharCode(bytes[next(bytes.length)] as number);
      const changed = [
        text.slice(0, at) + c + text.slice(at + 1),
        text.slice(0, at) + c + text.slice(at),
        text.slice(0, at) + text.slice(at + 1),
      ][i % 3] as string;
      const want = parses(changed);
      if (want) valid++;
      if (checked(changed) !== want) expect([changed, checked(changed)]).toEqual([changed, want]);
    }
    // Both kinds came up: a change that stays JSON (a digit for a digit) and one that does not.
    expect(valid).toBeGreaterThan(1_000);
    expect(valid).toBeLessThan(19_000);
  });
});
