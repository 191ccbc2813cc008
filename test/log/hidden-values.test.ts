import { expect, it } from "vitest";
import { HiddenValues } from "../../src/log/hidden-values.ts";

const line = (o: object) => JSON.stringify(o);

it("replaces a value wherever a string quotes it, and leaves the line JSON", () => {
  const hidden = new HiddenValues();
  hidden.add(["s3cret-Pw", 'we"ird\\pw']);
  const out = hidden.redact(
    line({ msg: "connect to https://u:s3cret-Pw@h/x failed", err: { stack: 'a we"ird\\pw b\ns3cret-Pw' } }),
  );
  expect(JSON.parse(out)).toEqual({
    msg: "connect to https://u:[redacted]@h/x failed",
    err: { stack: "a [redacted] b\n[redacted]" },
  });
});

it("hides the longer of two values sharing a start, and never text outside strings or inside an escape", () => {
  const hidden = new HiddenValues();
  hidden.add(["abcd", "abcdefgh", "1796", "001b", "ab"]);
  const out = hidden.redact(line({ time: 1796, a: "xabcdefghy abcdz", c: "\u001b", short: "ab" }));
  expect(JSON.parse(out)).toEqual({ time: 1796, a: "x[redacted]y [redacted]z", c: "\u001b", short: "ab" });
});

it("leaves a line with no hidden value as it is", () => {
  const hidden = new HiddenValues();
  const text = line({ msg: "nothing here" });
  expect(hidden.redact(text)).toBe(text);
  hidden.add(["value-1234"]);
  expect(hidden.redact(text)).toBe(text);
});
