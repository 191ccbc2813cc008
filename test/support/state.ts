import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test as base } from "vitest";

/** A test with a fresh, empty temp directory that is removed afterwards. */
export const test = base.extend<{ dir: string }>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures a test uses from this pattern
  dir: async ({}, use) => {
    const dir = await mkdtemp(join(tmpdir(), "bothost-state-"));
    await use(dir);
    await rm(dir, { recursive: true, force: true });
  },
});

/** A settable clock for expiry tests. */
export function manualClock(start = 1_700_000_000_000): { now: () => number; advance(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    advance: (ms) => {
      t += ms;
    },
  };
}
