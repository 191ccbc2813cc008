/**
 * An instance that ran a bot and now keeps it on standby lists none of its dialogs: the instance
 * running it holds them, and what this one saw of them is stale (a dialog answered or ended
 * there). `bothost dialogs`, `bothost status` and `bothost_dialogs_waiting` on the standby say
 * nothing of them, so summing the instances counts each dialog once. One `bothost run` on a
 * redis-server of its own; its lease given to another instance by hand (skipped without
 * redis-server on PATH).
 */
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.ts";
import { hasRedisServer, startInstance, useOwnRedisCluster } from "../support/cluster.ts";
import { send } from "../support/e2e-daemon.ts";

const available = hasRedisServer();
if (!available) console.warn("standby dialogs: redis-server is not on PATH: skipped");

const start = useOwnRedisCluster();
const prefix = "standby-dialogs";

interface Status {
  bots: {
    name: string;
    state: string;
    leaseHolder?: string;
    dialogs: { waiting: number; list: unknown[] };
  }[];
}

describe.skipIf(!available)("a bot this instance ran, on standby now", () => {
  it("shows no dialog of its own: the instance running the bot lists them", async () => {
    const { redis, sandbox, config } = await start({ prefix, ttl: "3s" });
    const instance = await startInstance(config);
    expect(instance.started).toBe(1);
    send(sandbox, "survey", "c0", "s1");
    await sandbox.control.waitFor(() => sandbox.control.messages().some((m) => m.content === "Q1 first?"), {
      timeoutMs: 15_000,
    });
    const status = async () => (await (await fetch(`${instance.url}/admin/status`)).json()) as Status;
    await expect.poll(async () => (await status()).bots[0]?.dialogs.waiting, { timeout: 10_000 }).toBe(1);

    // Another instance takes the lease (as after a partition): this one's renewal is refused.
    const direct = new Redis(redis.url);
    try {
      await direct.set(`${prefix}#lease:b0`, "999:elsewhere", "PX", 60_000);
    } finally {
      direct.disconnect();
    }
    // Standby, and named where it runs once a round read the lease: the renewal that found it
    // taken can come in the round whose read still showed it held here.
    await expect
      .poll(async () => (await status()).bots[0], { timeout: 15_000 })
      .toMatchObject({ state: "standby", leaseHolder: "elsewhere" });

    const bot = (await status()).bots[0]!;
    expect(bot.dialogs).toEqual({ waiting: 0, list: [] });
    const dialogs = await (await fetch(`${instance.url}/admin/dialogs`)).json();
    expect(dialogs).toEqual([{ bot: "b0", dialogs: [], elsewhere: true, leaseHolder: "elsewhere" }]);
    const metrics = await (await fetch(`${instance.url}/metrics`)).text();
    expect(metrics).toContain('bothost_dialogs_waiting{bot="b0"} 0');
    // An end asked here (of any dialog id: none is looked up) names the instance running the bot,
    // and that it may be gone.
    const ended = await fetch(`${instance.url}/admin/dialogs/b0/1/end`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(ended.status).toBe(409);
    // Both say how to reach that instance: its admin socket, or its HTTP listener's route.
    const reach =
      "with this command where that instance's admin socket is (its machine; on this one, an instance started from a config file of its own) or POST /admin/dialogs/b0/1/end on its http.listen";
    expect(await ended.json()).toEqual({
      code: "BOT_NOT_HERE",
      error: `bot "b0" runs on instance elsewhere: end its dialog there, ${reach} (should that instance be gone, an instance takes the bot: end it there then)`,
    });
    const cli = (...args: string[]) => runCli(["dialogs", ...args, "-c", config.file], { env: config.env });
    expect(await cli()).toMatchObject({
      code: 0,
      stdout:
        "b0: runs on instance elsewhere (its dialogs are listed there: bothost dialogs where that instance's admin socket is, or GET /admin/dialogs on its http.listen)\n",
    });
    const end = await cli("end", "b0", "1");
    expect(end.code).toBe(1);
    expect(end.stderr).toContain(`end its dialog there, ${reach}`);
  }, 60_000);
});
