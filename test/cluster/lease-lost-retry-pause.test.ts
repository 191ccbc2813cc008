/**
 * A message whose handler failed and waits to run again when the bot's lease is lost: left to the
 * instance that runs the bot now (its catch-up runs it, once), with no dead letter here. Before,
 * the stop kept it as a letter marked for replay, written though the lease was gone, while its
 * handled mark was refused: the new runner's catch-up ran the message and every start replayed
 * the letter too, two runs of one event. One `bothost run` on a redis-server of its own, its lease
 * given to another instance by hand during the retry's pause (skipped without redis-server).
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { hasRedisServer, startInstance, taggedModule, useOwnRedisCluster } from "../support/cluster.ts";
import { send } from "../support/e2e-daemon.ts";

const available = hasRedisServer();
if (!available) console.warn("lease lost in a retry's pause: redis-server is not on PATH: skipped");

const start = useOwnRedisCluster();
const prefix = "lease-lost-pause";

describe.skipIf(!available)("a message waiting to run again when the bot's lease is lost", () => {
  it("is left to the instance that runs the bot now: no dead letter here", async () => {
    const { redis, sandbox, config } = await start({ prefix, ttl: "3s" });
    await taggedModule(config, "v1");
    await writeFile(
      path.join(path.dirname(config.file), "bot.mjs"),
      `export default { events: ["message"], setup(bot) {
  bot.on("message", (ctx) => ctx.event.message.content === "boom", async () => {
    throw new Error("always broken");
  });
} };\n`,
    );
    // A long pause between attempts: the lease is lost during it.
    const text = await readFile(config.file, "utf8");
    await writeFile(
      config.file,
      text.replace(/( {4}api_key: .*)/, "$1\n    retries: { attempts: 3, backoff: 60s, max_backoff: 60s }"),
    );
    const instance = await startInstance(config);
    expect(instance.started).toBe(1);
    send(sandbox, "boom");
    await instance.proc.waitForLog((l) => l.msg === "handler failed", 15_000);

    const direct = new Redis(redis.url);
    try {
      await direct.set(`${prefix}#lease:b0`, "999:elsewhere", "PX", 60_000);
      await instance.proc.waitForLog((l) => String(l.msg).startsWith("lease lost"), 20_000);
      await instance.proc.waitForLog(
        (l) => l.msg === "a message's run was cut off by the stop: it runs again at the next start",
        10_000,
      );
      const letters = await direct.keys(`${prefix}*dead-letters*`);
      expect(letters).toEqual([]);
    } finally {
      direct.disconnect();
    }
  }, 60_000);
});
