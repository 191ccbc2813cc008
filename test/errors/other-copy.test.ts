/**
 * `instanceof` of bothost's error classes across two copies of bothost in one process (the
 * package's bundle, as a bot module imports it, and src/, as another copy): an error of one copy
 * is an instance of the other copy's class of the same name and its bases, and of no other.
 */

import * as bundled from "bothost";
import { describe, expect, it } from "vitest";
import { ApiError, RateLimitError } from "../../src/api/errors.ts";
import { BothostError } from "../../src/errors/bothost-error.ts";
import { NoRetry } from "../../src/errors/no-retry.ts";
import { PromptError } from "../../src/pipeline/dialogs/prompt-error.ts";

const init = { status: 400, code: "BAD_REQUEST", msg: "x", endpoint: "GET /users/me", data: {} } as const;

describe("an error made by another copy of bothost", () => {
  it("is an instance of this copy's class of the same name and of its bases", () => {
    expect(bundled.PromptError).not.toBe(PromptError);
    const timeout = new bundled.PromptError("PROMPT_TIMEOUT", "no answer");
    expect(timeout instanceof PromptError).toBe(true);
    expect(timeout instanceof BothostError).toBe(true);
    expect(timeout instanceof Error).toBe(true);
    expect(new PromptError("PROMPT_TIMEOUT", "no answer") instanceof bundled.PromptError).toBe(true);
    expect(new bundled.NoRetry("stop") instanceof NoRetry).toBe(true);
    const limited = new bundled.RateLimitError({
      ...init,
      status: 429,
      code: "RATE_LIMIT_HIT",
      retryAfterMs: 3000,
      limits: undefined,
    });
    expect(limited instanceof RateLimitError).toBe(true);
    expect(limited instanceof ApiError).toBe(true);
  });

  it("is no instance of another class, and nothing else passes", () => {
    expect(new bundled.NoRetry("stop") instanceof PromptError).toBe(false);
    expect(new bundled.BothostError("X", "x") instanceof PromptError).toBe(false);
    expect(new bundled.ApiError(init) instanceof RateLimitError).toBe(false);
    const plain = Object.assign(new Error("x"), { name: "PromptError", code: "PROMPT_TIMEOUT" });
    expect(plain instanceof PromptError).toBe(false);
    expect((null as unknown) instanceof BothostError).toBe(false);
    expect(Object.keys(new bundled.PromptError("PROMPT_TIMEOUT", "x"))).not.toContain(
      "Symbol(bothost.errorClasses)",
    );
    expect(JSON.stringify(new PromptError("PROMPT_TIMEOUT", "x"))).not.toContain("BothostError");
  });
});
