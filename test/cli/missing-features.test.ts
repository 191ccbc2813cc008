/**
 * The features `bothost check` says a server lacks, by feature level.
 */
import { describe, expect, it } from "vitest";
import { missingFeatures } from "../../src/cli/check.ts";
import { featureLevels, SANDBOX_FEATURE_LEVEL } from "../../src/wire/feature-levels.ts";

describe("missingFeatures", () => {
  it("lists nothing for the newest server the seed knows", () => {
    expect(missingFeatures(SANDBOX_FEATURE_LEVEL)).toEqual([]);
  });

  it("lists every described feature for a very old server, oldest requirement first", () => {
    expect(missingFeatures(1)).toEqual([
      "user lookup by email (FL 39)",
      "code playgrounds (FL 49)",
      "typing notifications in channels (FL 58)",
      "scheduled messages (FL 179)",
      "editing scheduled messages (FL 184)",
      "saved snippets (FL 297)",
      "user lookup by real email (FL 302)",
      "empty topic names (FL 334)",
      "editing saved snippets (FL 368)",
      "message reports (FL 382)",
      "channel folders (FL 389)",
      "bots updating user groups (FL 496)",
    ]);
  });

  it("counts a feature as present from exactly its level", () => {
    expect(missingFeatures(featureLevels.savedSnippets - 1)).toContain("saved snippets (FL 297)");
    expect(missingFeatures(featureLevels.savedSnippets)).not.toContain("saved snippets (FL 297)");
  });
});
