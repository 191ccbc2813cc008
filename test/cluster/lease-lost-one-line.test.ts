/**
 * A bot whose lease is lost while events are in flight: the loss is said in one warn line (the
 * lease lost, the instance that took it over, named as `bothost status` names it, how many events
 * were left to it), and no line per event above debug
 * (not each aborted handler, nor each write the fence refused, which is no store outage). One
 * `bothost run` on a redis-server of its own, its lease given to another instance by hand while
 * handlers wait and one writes (skipped without redis-server on PATH).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { hasRedisServer, startInstance, taggedModule, useOwnRedisCluster } from "../support/cluster.ts";
import { send } from "../support/e2e-daemon.ts";

const available = hasRedisServer();
if (!available) console.warn("lease lost, one line: redis-server is not on PATH: skipped");

const start = useOwnRedisCluster();
const prefix = "lease-lost-one-line";
/** The instance the test gives the lease to, as a lease's value names it after its fencing token. */
const OTHER = "host-b:4242:0badcafe";
const LOST = `lease lost: the bot stopped here; instance ${OTHER} runs it and takes over the events left in flight`;

describe.skipIf(!available)("a lease lost with events in flight", () => {
  it("is said once, with the events left; each event's lines of it are at debug", async () => {
    const { redis, sandbox, config } = await start({ prefix, ttl: "3s" });
    await taggedModule(config, "v1");
    // "hold" runs until its signal is aborted; "write" writes at once every 50 ms until a write
    // is refused, and passes that error on.
    await writeFile(
      path.join(path.dirname(config.file), "bot.mjs"),
      `export default { events: ["message"], setup(bot) {
  bot.on("message", (ctx) => ctx.event.message.content === "hold", async (ctx) => {
    ctx.log.info("holding");
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
  });
  bot.on("message", (ctx) => ctx.event.message.content === "write", async (ctx) => {
    ctx.log.info("writing");
    for (let n = 0; ; n++) {
      await ctx.state.immediate.set("n", n);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
} };\n`,
    );
    const instance = await startInstance(config);
    expect(instance.started).toBe(1);
    for (const topic of ["h1", "h2", "h3"]) send(sandbox, "hold", "c0", topic);
    send(sandbox, "write", "c0", "w");
    await expect
      .poll(() => instance.proc.logs().filter((l) => l.msg === "holding" || l.msg === "writing").length, {
        timeout: 15_000,
      })
      .toBe(4);
    const before = instance.proc.logs().length;

    const direct = new Redis(redis.url);
    try {
      await direct.set(`${prefix}#lease:b0`, `999:${OTHER}`, "PX", 60_000);
    } finally {
      direct.disconnect();
    }
    // The writer's write is refused by the fence (at debug), then the lease round sees the loss.
    await instance.proc.waitForLog((l) => l.code === "STATE_FENCED", 20_000);
    const lost = await instance.proc.waitForLog((l) => l.msg === LOST, 20_000);
    expect(lost).toMatchObject({
      level: 40,
      bot: "b0",
      holder: OTHER,
      reason: `instance ${OTHER} holds its lease now`,
    });
    expect(lost.left).toBeGreaterThanOrEqual(3);
    // The line comes once the bot stopped: every event's run was cut off or refused by then.
    const said = instance.proc
      .logs()
      .slice(before)
      .filter((l) => Number(l.level) >= 30 && l.bot === "b0")
      .map((l) => ({ level: l.level, msg: l.msg }));
    expect(said.filter((l) => Number(l.level) >= 40)).toEqual([{ level: 40, msg: LOST }]);
    // Nothing per event above debug, and no line names the bot's API key.
    expect(said.filter((l) => /cut off|cut short|outage/.test(String(l.msg)))).toEqual([]);
    expect(JSON.stringify(instance.proc.logs())).not.toContain(config.env.CLUSTER_KEY_B0);
  }, 60_000);
});
