import { describe, expect, it } from "vitest";
import { codePointLength } from "../../../src/effects/limits/code-points.ts";
import {
  MAX_REPORT_DESCRIPTION_LENGTH,
  ReportError,
  validateReport,
} from "../../../src/effects/report/message-reporter.ts";
import { serverDefaults } from "../../../src/wire/responses.ts";

const DEFAULTS = serverDefaults.server_report_message_types;

const EXTENDED = [
  { key: "spam", name: "Spam" },
  { key: "harassment", name: "Harassment" },
  { key: "other", name: "Other reason" },
  { key: "privacy", name: "Privacy violation" },
];

function reportError(fn: () => unknown): ReportError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ReportError);
    return err as ReportError;
  }
  throw new Error("expected a ReportError");
}

describe("validateReport", () => {
  it("accepts a type the server offers and passes the description through", () => {
    expect(validateReport({ type: "privacy", description: "posted my address" }, EXTENDED)).toEqual({
      report_type: "privacy",
      description: "posted my address",
    });
  });

  it("rejects a type the server does not offer, listing the allowed keys", () => {
    const err = reportError(() => validateReport({ type: "norms" }, EXTENDED));
    expect([err.code, err.name, err.field]).toEqual(["REPORT_INVALID", "ReportError", "type"]);
    expect(err.message).toBe(
      'Report type "norms" is not offered by this server; use one of: spam, harassment, other, privacy.',
    );
  });

  it("checks against the original five types (what serverInfoFrom assumes before FL 435)", () => {
    expect(validateReport({ type: "norms" }, DEFAULTS).report_type).toBe("norms");
    expect(reportError(() => validateReport({ type: "privacy" }, DEFAULTS)).message).toBe(
      'Report type "privacy" is not offered by this server; use one of: spam, harassment, inappropriate, norms, other.',
    );
  });

  it.each([undefined, "", "   "])("requires a non-empty description for other (got %j)", (description) => {
    const err = reportError(() => validateReport({ type: "other", description }, EXTENDED));
    expect(err.field).toBe("description");
    expect(err.message).toBe(
      'Report type "other" needs a description of what is wrong; pass a non-empty description.',
    );
  });

  it("sends no description when none is given for other types", () => {
    expect(validateReport({ type: "spam" }, EXTENDED)).toEqual({
      report_type: "spam",
      description: undefined,
    });
  });

  it("keeps a description of exactly 1000 code points (2000 UTF-16 units) whole", () => {
    const description = "👋".repeat(MAX_REPORT_DESCRIPTION_LENGTH);
    expect(validateReport({ type: "spam", description }, EXTENDED)).toEqual({
      report_type: "spam",
      description,
    });
  });

  it("checks the description of other against the given types, and the type against the defaults", () => {
    expect(validateReport({ type: "other", description: "context" }, EXTENDED)).toEqual({
      report_type: "other",
      description: "context",
    });
    expect(reportError(() => validateReport({ type: "other", description: undefined }, EXTENDED)).field).toBe(
      "description",
    );
    expect(reportError(() => validateReport({ type: "privacy", description: "x" }, DEFAULTS)).field).toBe(
      "type",
    );
  });

  it("cuts a longer description to 1000 code points ending in …, at a code point boundary", () => {
    const description = "a".repeat(998) + "😀😀😀";
    const result = validateReport({ type: "other", description }, EXTENDED);
    expect(result.description).toBe(`${"a".repeat(998)}😀…`);
    expect(codePointLength(result.description ?? "")).toBe(1000);
  });
});
