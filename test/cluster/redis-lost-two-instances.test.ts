/**
 * Redis losing bothost's keys (flushed, or restarted without persistence) under two instances:
 * the instance that ran the bot takes it again, not the standby, so the bot goes on from where it
 * was (the messages sent while it was stopped are caught up, the person of a dialog it knew is
 * told). Before, the standby's round saw the lease free while the holder's stopped the bot, and
 * took it: the bot started over from the newest message there, and what was sent meanwhile went
 * unhandled, without a word. Two `bothost run` on a redis-server of their own (skipped without
 * redis-server on PATH).
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  hasRedisServer,
  type Instance,
  loseKeysThenSend,
  startInstance,
  useOwnRedisCluster,
} from "../support/cluster.ts";
import { botSaid, send } from "../support/e2e-daemon.ts";

const available = hasRedisServer();
if (!available)
  console.warn("Redis losing its keys under two instances: redis-server is not on PATH: skipped");

const start = useOwnRedisCluster();

const acquired = (instance: Instance) =>
  instance.proc.logs().filter((l) => l.msg === "lease acquired; starting the bot on this instance");

describe.skipIf(!available)("Redis losing its keys under two instances", () => {
  it("leaves the bot to the instance that ran it, which catches up from where it was", async () => {
    const { redis, sandbox, config } = await start({ prefix: "lost-two", ttl: "3s" });
    // Each answer names the process that made it.
    await writeFile(
      path.join(path.dirname(config.file), "bot.mjs"),
      `export default { events: ["message"], setup(bot) {
  bot.on("message", (ctx) => ctx.event.message.content.startsWith("echo "), (ctx) =>
    ctx.reply("echoed " + ctx.event.message.content.slice(5) + " by " + process.pid));
} };\n`,
    );
    const yaml = await readFile(config.file, "utf8");
    await writeFile(config.file, yaml.replace(/module: .*cluster-bot\.mjs/, "module: ./bot.mjs"));
    const first = await startInstance(config);
    const second = await startInstance(config);
    expect([first.started, second.standby]).toEqual([1, ["b0"]]);
    const pid = first.proc.child.pid;
    send(sandbox, "echo 1", "c0", "Misc");
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual([`echoed 1 by ${pid}`]);
    await loseKeysThenSend(redis.url, "lost-two", sandbox, "echo 2");
    await expect
      .poll(() => botSaid(sandbox), { timeout: 20_000 })
      .toEqual([`echoed 1 by ${pid}`, `echoed 2 by ${pid}`]);
    expect(acquired(first)).toHaveLength(2);
    expect(acquired(second)).toEqual([]);
    send(sandbox, "echo 3", "c0", "Misc");
    await expect.poll(() => botSaid(sandbox).at(-1), { timeout: 15_000 }).toBe(`echoed 3 by ${pid}`);
  }, 60_000);
});
