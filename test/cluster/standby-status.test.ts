/**
 * `bothost status` of an instance keeping a bot on standby names the instance holding the bot's
 * lease, with why it does not run here: a bot whose instance died reads the same until that lease
 * expires, so the operator can tell a bot running elsewhere from one waiting for a takeover. Two
 * `bothost run` instances sharing one Redis; the status read over the standby's HTTP listener.
 */
import { describe, expect, it } from "vitest";
import { formatStatus } from "../../src/cli/status.ts";
import type { DaemonStatus } from "../../src/http/daemon-status.ts";
import { startInstance, useSharedRedisCluster } from "../support/cluster.ts";
import { noRedisMessage, redisReachable } from "../support/redis.ts";

const reachable = await redisReachable();
if (!reachable) console.warn(`cluster standby status: ${noRedisMessage}`);

const startCluster = useSharedRedisCluster("standby-status");

describe.skipIf(!reachable)("a bot on standby", () => {
  it("its status names the instance holding its lease, and why it does not run here", async () => {
    const { config } = await startCluster({ ttl: "15s" });
    const first = await startInstance(config);
    const runner = (
      await first.proc.waitForLog(
        (l) => l.msg === "cluster mode: bots are shared with the other instances by leases",
      )
    ).instance;
    const second = await startInstance(config);
    expect(second.standby).toEqual(["b0"]);

    const status = (await (await fetch(`${second.url}/admin/status`)).json()) as DaemonStatus;
    expect(
      status.bots.map(({ name, state, leaseHolder, reason }) => ({ name, state, leaseHolder, reason })),
    ).toEqual([
      {
        name: "b0",
        state: "standby",
        leaseHolder: runner,
        reason: `instance ${runner} holds its lease and runs it (should that instance be gone, an instance takes the bot once the lease expires, or at its next round when it runs on the same host, in the same container and as the same user)`,
      },
    ]);
    // The account's calls are made and counted by the instance running the bot: this one's
    // client made none, and a line of its own would say the whole hour is left.
    expect(formatStatus(status)).not.toContain("calls used this hour");
  });
});
