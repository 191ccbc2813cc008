/**
 * The stores a crash test runs a daemon on, each as the config's `state:` lines and the store
 * opened directly: the file store, and Redis when one answers (else one line says the Redis case
 * is skipped). Each Redis case gets its own key prefix, dropped after the file's tests.
 */
import path from "node:path";
import { afterAll } from "vitest";
import { FileStore } from "../../src/state/file-store.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import type { StateBackend } from "../../src/state/state-store.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "./redis.ts";

/** Where a test's state lives: the config's `state:` lines, and the store opened directly. */
export interface Backend {
  yaml: string;
  open(): Promise<StateBackend>;
}

/** `[name, backendFor(dir)]` pairs for `describe.each`; `label` names the file in the skip line. */
export async function crashBackends(label: string): Promise<Array<[string, (dir: string) => Backend]>> {
  const prefixes: string[] = [];
  const backends: Array<[string, (dir: string) => Backend]> = [
    [
      "file store",
      (dir) => ({
        yaml: `state:\n  path: ${path.join(dir, "state")}`,
        open: () => FileStore.open(path.join(dir, "state"), { autoFlushMs: 0 }),
      }),
    ],
  ];
  if (await redisReachable()) {
    backends.push([
      "Redis",
      () => {
        const prefix = uniquePrefix(label);
        prefixes.push(prefix);
        return {
          // A short lease: the restarted instance takes the bot once the killed one's lease expired.
          yaml: `state:\n  redis: ${redisUrl}\n  prefix: ${prefix}\nleases:\n  ttl: 3s`,
          open: () => RedisStore.open({ url: redisUrl, prefix }),
        };
      },
    ]);
  } else {
    console.warn(`${label}: ${noRedisMessage}`);
  }
  afterAll(async () => {
    for (const prefix of prefixes) await dropPrefix(prefix);
  });
  return backends;
}
