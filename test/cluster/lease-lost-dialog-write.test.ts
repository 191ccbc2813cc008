/**
 * A bot whose lease is lost while a dialog's write is under way (its question sent, the
 * question's append refused by the fence): the write is not a store outage, so its tries are at
 * debug, as each event's lines of a lost lease are, and the loss is said in the one warn line.
 * One `bothost run` on a redis-server of its own (skipped without redis-server on PATH).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { hasRedisServer, startInstance, taggedModule, useOwnRedisCluster } from "../support/cluster.ts";
import { send } from "../support/e2e-daemon.ts";

const available = hasRedisServer();
if (!available) console.warn("lease lost during a dialog's write: redis-server is not on PATH: skipped");

const start = useOwnRedisCluster();
const prefix = "lease-lost-dialog-write";
const LOST =
  "lease lost: the bot stopped here; another instance runs it and takes over the events left in flight";

describe.skipIf(!available)("a lease lost while a dialog's question is written", () => {
  it("tries the fenced write at debug; only the lease's loss is said at warn", async () => {
    const { redis, sandbox, config } = await start({ prefix, ttl: "3s" });
    await taggedModule(config, "v1");
    await writeFile(
      path.join(path.dirname(config.file), "bot.mjs"),
      `export default { events: ["message"], setup(bot) {
  bot.on("message", (ctx) => ctx.event.message.content === "ask", async (ctx) => {
    ctx.log.info("asking");
    await ctx.prompt("Which size?");
  });
} };\n`,
    );
    const instance = await startInstance(config);
    expect(instance.started).toBe(1);
    // The question's send is held until the lease is elsewhere: its append is then fenced.
    sandbox.control.delay(3_600_000, { paths: [/^\/messages$/] });
    send(sandbox, "ask", "c0", "d");
    await instance.proc.waitForLog((l) => l.msg === "asking", 15_000);
    await sandbox.control.waitFor(() => sandbox.control.delayed() === 1, { timeoutMs: 15_000 });
    const before = instance.proc.logs().length;
    const direct = new Redis(redis.url);
    try {
      await direct.set(`${prefix}#lease:b0`, "999:elsewhere", "PX", 60_000);
    } finally {
      direct.disconnect();
    }
    sandbox.control.delay(0);
    const fencedWrite = (l: Record<string, unknown>) =>
      l.msg === "the state store failed a dialog's write; trying again" &&
      JSON.stringify(l.err ?? "").includes("STATE_FENCED");
    await instance.proc.waitForLog(fencedWrite, 20_000);
    await instance.proc.waitForLog((l) => l.msg === LOST, 20_000);
    const said = instance.proc
      .logs()
      .slice(before)
      .filter((l) => Number(l.level) >= 40 && l.bot === "b0")
      .map((l) => String(l.msg));
    expect(said).toEqual([LOST]);
  }, 60_000);
});
