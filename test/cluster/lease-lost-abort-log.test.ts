/**
 * A bot whose lease is lost here is stopped alone, its handlers still running aborted after
 * `ttl/6`: the log says it was the bot's stop (why: its lease), not a shutdown, since the daemon
 * goes on. One `bothost run` on a redis-server of its own, its lease given to another instance
 * by hand while a handler waits (skipped without redis-server on PATH).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { hasRedisServer, startInstance, taggedModule, useOwnRedisCluster } from "../support/cluster.ts";
import { send } from "../support/e2e-daemon.ts";

const available = hasRedisServer();
if (!available) console.warn("lease lost, handlers aborted: redis-server is not on PATH: skipped");

const start = useOwnRedisCluster();
const prefix = "lease-lost-abort";

describe.skipIf(!available)("a handler still running when the bot's lease is lost", () => {
  it("is aborted with a line saying the bot's stop (its lease), not a shutdown", async () => {
    const { redis, sandbox, config } = await start({ prefix, ttl: "3s" });
    await taggedModule(config, "v1");
    // A handler that runs until its signal is aborted.
    await writeFile(
      path.join(path.dirname(config.file), "bot.mjs"),
      `export default { events: ["message"], setup(bot) {
  bot.on("message", (ctx) => ctx.event.message.content === "hold", async (ctx) => {
    ctx.log.info("holding");
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
  });
} };\n`,
    );
    const instance = await startInstance(config);
    expect(instance.started).toBe(1);
    send(sandbox, "hold");
    await instance.proc.waitForLog((l) => l.msg === "holding", 15_000);

    const direct = new Redis(redis.url);
    try {
      await direct.set(`${prefix}#lease:b0`, "999:elsewhere", "PX", 60_000);
    } finally {
      direct.disconnect();
    }
    const line = await instance.proc.waitForLog((l) => l.abandoned === 1, 20_000);
    expect(line).toMatchObject({
      bot: "b0",
      msg: "the bot's stop deadline passed; handlers still running were aborted",
      stop: "its lease was lost or handed over",
    });
    expect(instance.proc.logs().filter((l) => String(l.msg).includes("shutdown"))).toEqual([]);
  }, 60_000);
});
