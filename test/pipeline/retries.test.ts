import { expect, it } from "vitest";
import { retryDelay } from "../../src/pipeline/handler-failures.ts";

it("retryDelay doubles from the backoff up to the cap", () => {
  const policy = { attempts: 9, backoffMs: 2_000, maxBackoffMs: 30_000 };
  expect([1, 2, 3, 4, 5].map((n) => retryDelay(policy, n))).toEqual([2_000, 4_000, 8_000, 16_000, 30_000]);
});
