/**
 * Redis listing: what a bot's state listings cost (its dead letters, as `bothost status` and each
 * dead-letter add read them, and its runtime records, as its start reads them) with nothing else
 * in the database, then with 1,000,000 unrelated keys beside them. The store lists from its
 * per-namespace index; a `SCAN MATCH` walk of the same database (what listing cost before the
 * index) is timed too, for scale. Every key it writes is its own (a unique prefix) and is deleted
 * after; set BENCH_REDIS_URL (else REDIS_URL) to pick the database.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { RedisStore } from "../lib/built.ts";
import { median } from "../lib/stats.ts";

export interface RedisListRow {
  unrelated: number;
  lettersMs: number;
  runtimeMs: number;
  scanMs: number;
}

export interface RedisListResult {
  available: boolean;
  note: string;
  rows: RedisListRow[];
}

const url = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379/0";

export async function runRedisList(
  options: { unrelated: number; calls: number },
  say: (line: string) => void,
): Promise<RedisListResult> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
  try {
    await probe.connect();
  } catch {
    probe.disconnect();
    const note = `no Redis at ${url}; not measured`;
    say(`  redis listing: ${note}`);
    return { available: false, note, rows: [] };
  }
  const tag = `bench-${randomBytes(4).toString("hex")}`;
  const store = await RedisStore.open({ url, prefix: tag });
  const rows: RedisListRow[] = [];
  try {
    const bot = store.namespace("echo");
    for (let i = 0; i < 100; i++)
      await bot.namespace("letters").set(`l${i}`, { id: i, error: "x".repeat(200) });
    for (const key of ["cursor", "finished", "identity", "queue"]) await bot.namespace("runtime").set(key, 1);
    for (let i = 0; i < 1_000; i++)
      await bot.namespace("effects").set(`e${i}`, { ok: i }, { ttlMs: 600_000 });
    for (const unrelated of [0, options.unrelated]) {
      if (unrelated > 0) await fill(probe, `${tag}-other`, unrelated);
      const time = async (list: () => Promise<unknown>) => {
        const ms: number[] = [];
        for (let i = 0; i < options.calls; i++) {
          const at = performance.now();
          await list();
          ms.push(performance.now() - at);
        }
        return round(median(ms));
      };
      const lettersMs = await time(() => bot.namespace("letters").list());
      const runtimeMs = await time(() => bot.namespace("runtime").list("handled:"));
      const scanAt = performance.now();
      for await (const _ of probe.scanStream({ match: `${tag}:echo/letters/*`, count: 1000 })) {
      }
      const scanMs = round(performance.now() - scanAt);
      rows.push({ unrelated, lettersMs, runtimeMs, scanMs });
      say(
        `  redis listing, ${unrelated.toLocaleString("en-US")} unrelated keys: letters ${lettersMs} ms, runtime ${runtimeMs} ms (median of ${options.calls}); a SCAN MATCH walk ${scanMs} ms`,
      );
    }
  } finally {
    await store.close();
    await drop(probe, `${tag}*`);
    probe.disconnect();
  }
  return { available: true, note: "", rows };
}

/** `count` keys named `<name>:<i>`, 1,000 to a command, 50 commands in flight. */
async function fill(client: Redis, name: string, count: number): Promise<void> {
  for (let from = 0; from < count; from += 50_000) {
    const pipeline = client.pipeline();
    for (let i = from; i < Math.min(count, from + 50_000); i += 1_000) {
      const pairs: string[] = [];
      for (let j = i; j < Math.min(count, i + 1_000); j++) pairs.push(`${name}:${j}`, "x");
      pipeline.mset(...pairs);
    }
    await pipeline.exec();
  }
}

async function drop(client: Redis, pattern: string): Promise<void> {
  for await (const keys of client.scanStream({ match: pattern, count: 10_000 }) as AsyncIterable<string[]>) {
    if (keys.length > 0) await client.unlink(...keys);
  }
}

const round = (ms: number) => Math.round(ms * 100) / 100;
