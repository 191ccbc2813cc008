/**
 * zod's complaints in plain words (issueInWords), read from real zod 4 issues: zod's own wording
 * is replaced, a message the schema's author wrote is kept.
 */
import { expect, it } from "vitest";
import { z } from "zod";
import { issueInWords } from "../../src/errors/issue-words.ts";

const words = (schema: z.ZodType, value: unknown) => issueInWords(schema.safeParse(value).error?.issues[0]);

it("words zod's own complaints for the person who typed the value", () => {
  const count = z.coerce.number().int().min(1).max(9);
  expect(words(count, "two")).toBe("expected a number");
  expect(words(count, "3.5")).toBe("expected a whole number");
  expect(words(count, "0")).toBe("expected at least 1");
  expect(words(z.coerce.number().gt(0), "0")).toBe("expected more than 0");
  expect(words(z.string().min(3), "ab")).toBe("expected at least 3 characters");
  expect(words(z.string().max(1), "ab")).toBe("expected at most 1 character");
  expect(words(z.enum(["small", "large"]), "huge")).toBe("expected one of small, large");
  expect(words(z.email(), "x")).toBe("expected an email address");
});

it("keeps a message the schema's author wrote, and what it has no words for", () => {
  expect(words(z.coerce.number().min(1, "pick 1 to 9"), "0")).toBeUndefined();
  expect(words(z.string().regex(/^x/), "y")).toBeUndefined();
  expect(issueInWords(undefined)).toBeUndefined();
});
