import { describe, expect, it } from "vitest";
import { codePointLength, truncateCodePoints } from "../../../src/effects/limits/code-points.ts";
import {
  ContentTooLongError,
  checkTopic,
  TopicTooLongError,
} from "../../../src/effects/limits/limit-errors.ts";
import { splitContent } from "../../../src/effects/limits/split-content.ts";

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})/;

/** A seeded PRNG (mulberry32) so a failing case can be replayed from its seed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  "deploy",
  "naïve",
  "東京",
  "👋",
  "🧑‍💻",
  "x",
  "supercalifragilistic",
  "a😀b",
  "-",
  "https://example.org/a/very/long/path?with=query&and=more",
];

function randomText(next: () => number, withFences: boolean): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(next() < 0.9 ? " " : "  ");
  const blocks: string[] = [];
  const count = 1 + Math.floor(next() * 12);
  for (let i = 0; i < count; i++) {
    const r = next();
    if (withFences && r < 0.2) {
      const code = Array.from(
        { length: 1 + Math.floor(next() * 15) },
        () => `    ${words(1 + Math.floor(next() * 8))}`,
      );
      blocks.push(["```python", ...code, "```"].join("\n"));
    } else if (withFences && r < 0.27) {
      blocks.push(["```quote", words(5), "```js", words(4), words(6), "```", words(3), "```"].join("\n"));
    } else if (r < 0.35) {
      blocks.push("z".repeat(Math.floor(next() * 400))); // one very long word
    } else {
      const lines = Array.from({ length: 1 + Math.floor(next() * 5) }, () =>
        words(1 + Math.floor(next() * 25)),
      );
      blocks.push(lines.join("\n"));
    }
  }
  return blocks.join(next() < 0.8 ? "\n\n" : "\n\n\n");
}

const withoutFencesOrSpace = (text: string) =>
  text
    .split("\n")
    .filter((line) => !FENCE_LINE.test(line))
    .join("")
    .replace(/\s/g, "");

/** Open fences left at the end of `text` (a small independent fence tracker for the generated shapes). */
function openFencesAtEnd(text: string): number {
  const stack: string[] = [];
  for (const line of text.split("\n")) {
    const m = /^(`{3,}|~{3,})(\w*)\s*$/.exec(line);
    if (!m) continue;
    if (stack.length > 0 && m[2] === "") stack.pop();
    else if (stack.length === 0 || stack.at(-1) === "quote") stack.push(m[2] ?? "");
  }
  return stack.length;
}

describe("splitContent properties over random texts", () => {
  it.each([false, true])(
    "fences=%s: pieces fit, nothing lost, no broken surrogate, fences balanced",
    (withFences) => {
      for (let seed = 1; seed <= 300; seed++) {
        const next = rng(seed * (withFences ? 7 : 13));
        const text = randomText(next, withFences);
        const max = 60 + Math.floor(next() * 400);
        const chunks = splitContent(text, max);
        const where = `seed ${seed}, max ${max}`;
        if (codePointLength(text) <= max) expect(chunks, where).toEqual([text]);
        for (const chunk of chunks) {
          expect(codePointLength(chunk), where).toBeLessThanOrEqual(max);
          expect(LONE_SURROGATE.test(chunk), where).toBe(false);
          expect(chunk.trim(), where).not.toBe("");
          expect(openFencesAtEnd(chunk), `${where}: ${chunk}`).toBe(0);
        }
        expect(chunks.map(withoutFencesOrSpace).join(""), where).toBe(withoutFencesOrSpace(text));
        if (!withFences) {
          // Without fences every piece is a verbatim slice, with only whitespace dropped between them.
          let pos = 0;
          for (const chunk of chunks) {
            const at = text.indexOf(chunk, pos);
            expect(at, where).toBeGreaterThanOrEqual(pos);
            expect(text.slice(pos, at).trim(), where).toBe("");
            pos = at + chunk.length;
          }
          expect(text.slice(pos).trim(), where).toBe("");
        }
      }
    },
  );

  it("tiny limits (1-60, smaller than a fence can be closed and reopened): pieces fit, nothing lost", () => {
    // Fence markers and language names may be repeated or dropped when blocks cannot fit; compare the rest.
    const norm = (text: string) => text.replace(/\s|`|python|quote|js/g, "");
    for (let seed = 1; seed <= 200; seed++) {
      const next = rng(seed);
      const text = randomText(next, true);
      const max = 1 + Math.floor(next() * 60);
      const chunks = splitContent(text, max);
      const where = `seed ${seed}, max ${max}`;
      for (const chunk of chunks) {
        expect(codePointLength(chunk), where).toBeLessThanOrEqual(max);
        expect(LONE_SURROGATE.test(chunk), where).toBe(false);
      }
      expect(norm(chunks.join("")), where).toBe(norm(text));
    }
  });
});

describe("splitContent boundaries", () => {
  it("returns the content unchanged when it fits, measuring code points, not UTF-16 units", () => {
    const tenEmoji = "👋".repeat(10);
    expect(tenEmoji.length).toBe(20);
    expect(splitContent(tenEmoji, 10)).toEqual([tenEmoji]);
  });

  it("cuts at a paragraph break before a line break", () => {
    const text = "alpha one\nalpha two\n\nbeta one\nbeta two";
    expect(splitContent(text, 30)).toEqual(["alpha one\nalpha two", "beta one\nbeta two"]);
  });

  it("cuts at a line break when a paragraph is too long", () => {
    expect(splitContent("line one\nline two\nline three", 20)).toEqual(["line one\nline two", "line three"]);
  });

  it("cuts between words when a line is too long", () => {
    expect(splitContent("the quick brown fox jumps", 12)).toEqual(["the quick", "brown fox", "jumps"]);
  });

  it("hard-cuts a long word, never inside a surrogate pair", () => {
    expect(splitContent("👋".repeat(15), 7)).toEqual(["👋".repeat(7), "👋".repeat(7), "👋"]);
  });

  it("moves a code block that fits whole into the next piece rather than cutting it", () => {
    const code = "```python\nprint(1)\nprint(2)\n```";
    const text = `Here is the fix:\n${code}`;
    expect(splitContent(text, 35)).toEqual(["Here is the fix:", code]);
  });

  it("closes a code block that is too long at the cut and reopens it in the next piece", () => {
    const text = "```python\nline_one = 1\nline_two = 2\nline_three = 3\n```\nafter";
    expect(splitContent(text, 42)).toEqual([
      "```python\nline_one = 1\nline_two = 2\n```",
      "```python\nline_three = 3\n```\nafter",
    ]);
  });

  it("reopens nested blocks (code inside a quote) in order", () => {
    const text = "```quote\nsaid:\n~~~js\nlet a = 1;\nlet b = 2;\n~~~\n```";
    expect(splitContent(text, 39)).toEqual([
      "```quote\nsaid:\n~~~js\nlet a = 1;\n~~~\n```",
      "```quote\n~~~js\nlet b = 2;\n~~~\n```",
    ]);
  });
});

describe("splitContent errors", () => {
  it("mode reject throws CONTENT_TOO_LONG naming the length, the limit and the fix", () => {
    let error: unknown;
    try {
      splitContent("x".repeat(10_001), 10_000, { mode: "reject" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ContentTooLongError);
    const e = error as ContentTooLongError;
    expect([e.code, e.name, e.length, e.limit]).toEqual([
      "CONTENT_TOO_LONG",
      "ContentTooLongError",
      10_001,
      10_000,
    ]);
    expect(e.message).toBe(
      "Message content is 10001 characters (Unicode code points), over the server's max_message_length of 10000. " +
        "Shorten it, or set long_messages: split in the bot's config (next to settings:) to send it as several messages.",
    );
  });

  it("mode reject lets content that fits through", () => {
    expect(splitContent("short", 10, { mode: "reject" })).toEqual(["short"]);
  });

  it.each([0, -5, 2.5, Number.NaN])("rejects maxLength %s", (max) => {
    expect(() => splitContent("text", max)).toThrow(
      `splitContent: maxLength must be a positive integer (the server's max_message_length), got ${max}.`,
    );
  });
});

describe("checkTopic and code points", () => {
  it("accepts a topic at the limit (code points, surrounding whitespace stripped like the server)", () => {
    expect(() => checkTopic(`  ${"🙂".repeat(60)}  `, 60)).not.toThrow();
  });

  it("throws TOPIC_TOO_LONG with a preview, the length and the limit", () => {
    const topic = "a".repeat(61);
    let error: unknown;
    try {
      checkTopic(topic, 60);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(TopicTooLongError);
    expect((error as TopicTooLongError).code).toBe("TOPIC_TOO_LONG");
    expect((error as Error).message).toBe(
      `Topic "${"a".repeat(29)}…" is 61 characters (Unicode code points), over the server's max_topic_length of 60; ` +
        "the server would cut it short. Use a topic of at most 60 characters.",
    );
  });

  it("truncateCodePoints keeps whole code points and reports whether it cut", () => {
    expect(truncateCodePoints("👋👋👋", 2)).toEqual({ text: "👋…", truncated: true });
    expect(truncateCodePoints("👋👋", 2)).toEqual({ text: "👋👋", truncated: false });
    expect(codePointLength("héllo 👋")).toBe(7);
  });

  it("codePointLength counts as the string's iterator does, lone surrogates included", () => {
    const units = ["a", "é", "\ud83d", "\udc4b", "👋", "\n", "𝄞"];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let i = 0; i < 500; i++) {
      const text = Array.from({ length: next() % 12 }, () => units[next() % units.length]).join("");
      expect(codePointLength(text), JSON.stringify(text)).toBe([...text].length);
    }
    expect(codePointLength("\udc4b\ud83d")).toBe(2);
    expect(codePointLength("x\ud83d")).toBe(2);
  });
});
