/**
 * What a Redis holding bothost's state must not do, said once when a store opens: lose its writes
 * on a restart (no append-only file), or evict keys when full. Either loses a bot's cursor,
 * handled marks, effect claims or dialogs without a word, and messages are then handled twice or
 * not at all (docs/operations/instances.md). A Redis that refuses `INFO` (a managed one may) is
 * not judged.
 */
import type { Redis } from "ioredis";
import { describeRedis, type RedisTarget } from "./redis-url.ts";

/** Through Sentinel, replicas take over when the primary fails: its own file matters less. */
export async function warnUnsafeConfig(
  client: Redis,
  target: RedisTarget,
  log: { warn(obj: object, msg?: string): void } | undefined,
): Promise<void> {
  if (log === undefined) return;
  const where = describeRedis(target);
  const sentinel = typeof target !== "string";
  let info: string;
  try {
    info = `${await client.info("persistence")}\n${await client.info("memory")}`;
  } catch {
    return;
  }
  const field = (name: string) => new RegExp(`^${name}:(.*?)\\r?$`, "m").exec(info)?.[1];
  if (!sentinel && field("aof_enabled") === "0") {
    log.warn(
      { redis: where },
      "Redis runs without its append-only file (appendonly no): a restart of it loses the bots' state written since its last snapshot (cursors, handled marks, dialogs), and messages are then handled twice or not at all. Set appendonly yes, unless replicas take over when it fails (Sentinel)",
    );
  }
  const policy = field("maxmemory_policy");
  if (Number(field("maxmemory") ?? 0) > 0 && policy !== undefined && policy !== "noeviction") {
    log.warn(
      { redis: where, policy },
      `Redis may evict keys when it is full (maxmemory-policy ${policy}): an evicted key loses a bot's cursor, handled marks, effect claims or a dialog. Set maxmemory-policy noeviction`,
    );
  }
}
