import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, test as base } from "vitest";
import { FileStore } from "../../src/state/file-store.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import type { StateBackend } from "../../src/state/state-store.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "./redis.ts";

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

export type OpenStore = (dir: string, now: () => number) => Promise<StateBackend>;

/**
 * Every store a contract runs against: MemoryStore, FileStore, and RedisStore when a Redis
 * answers (each under a fresh prefix, dropped after the file's tests; a warning names `label`
 * when it is skipped). `manualClock`: the store's expiry follows the `now` it is given.
 */
export async function everyStore(
  label: string,
): Promise<Array<[string, OpenStore, { manualClock: boolean }]>> {
  const stores: Array<[string, OpenStore, { manualClock: boolean }]> = [
    ["MemoryStore", async (_dir, now) => new MemoryStore({ now }), { manualClock: true }],
    ["FileStore", (dir, now) => FileStore.open(dir, { now, autoFlushMs: 0 }), { manualClock: true }],
  ];
  if (!(await redisReachable())) {
    console.warn(`${label}: ${noRedisMessage}`);
    return stores;
  }
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const prefix of prefixes) await dropPrefix(prefix);
  });
  const open: OpenStore = () => {
    const prefix = uniquePrefix(label);
    prefixes.push(prefix);
    return RedisStore.open({ url: redisUrl, prefix });
  };
  stores.push(["RedisStore", open, { manualClock: false }]);
  return stores;
}
