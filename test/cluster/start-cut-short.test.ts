/**
 * A `bothost run` instance of a cluster stopped (SIGTERM) while a bot it holds the lease of is
 * still starting (its queue's registration held at the server): `start cut short by the shutdown`
 * names that bot as cut, not as on standby, which would say another instance runs it.
 */
import { describe, expect, it } from "vitest";
import { spawnCli } from "../support/cli.ts";
import { useSharedRedisCluster } from "../support/cluster.ts";
import { noRedisMessage, redisReachable } from "../support/redis.ts";

const reachable = await redisReachable();
if (!reachable) console.warn(`cluster start cut short: ${noRedisMessage}`);

const startCluster = useSharedRedisCluster("start-cut-short");

describe.skipIf(!reachable)("a cluster instance stopped while its bot starts", () => {
  it("says the bot's start was cut, with no bot on standby", { timeout: 60_000 }, async () => {
    const { sandbox, config } = await startCluster({ ttl: "3s" });
    sandbox.control.delay(60_000, { paths: ["/register"] });
    const proc = spawnCli(["run", "--config", config.file], { env: config.env });
    await proc.waitForLog((l) => l.msg === "lease acquired; starting the bot on this instance", 20_000);
    await sandbox.control.waitFor(() => sandbox.control.delayed() === 1, { timeoutMs: 20_000 });
    proc.kill("SIGTERM");
    const cut = await proc.waitForLog((l) => l.msg === "start cut short by the shutdown", 20_000);
    sandbox.control.delay(0);
    expect(cut).toMatchObject({ started: 0, authFailed: [], failed: [], standby: [], cut: ["b0"] });
    expect(await proc.exited).toEqual({ code: 0, signal: null });
  });
});
