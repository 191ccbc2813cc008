/**
 * An instance of a cluster on which every bot fails to start, not at its own start (the bot was
 * on standby then, run by another instance) but later, when a round gives it the bot: it can run
 * none of them, so it stops as a lone daemon would, with the same lines and exit code. Two
 * `bothost run` instances sharing one Redis; the second one's key is wrong.
 */
import { describe, expect, it } from "vitest";
import { startInstance, useSharedRedisCluster } from "../support/cluster.ts";
import { noRedisMessage, redisReachable } from "../support/redis.ts";

const reachable = await redisReachable();
if (!reachable) console.warn(`cluster runs nothing here: ${noRedisMessage}`);

const startCluster = useSharedRedisCluster("runs-nothing");

describe.skipIf(!reachable)("an instance on which every bot failed to start", () => {
  it("stops once a later round's start fails too, exit 3 when every key was refused", async () => {
    const { config } = await startCluster({ ttl: "3s" });
    const healthy = await startInstance(config);
    expect(healthy.started).toBe(1);
    const wrongKey = {
      ...config,
      env: { ...config.env, CLUSTER_KEY_B0: "WrongKey0123456789abcdefABCDEFGH" },
    };
    const broken = await startInstance(wrongKey);
    expect(broken.standby).toEqual(["b0"]);

    // The healthy instance stops cleanly: its lease is released, the broken one takes b0 and fails.
    healthy.proc.kill("SIGTERM");
    expect(await broken.proc.exited).toEqual({ code: 3, signal: null });
    expect(broken.proc.logs().map((l) => l.msg)).toContain(
      "every bot failed to start on this instance: it can run none of them, so the daemon stops",
    );
    expect(broken.proc.stderr()).toContain("bothost: no bot could start, so the daemon stops:\n  b0: ");
    expect(broken.proc.stdout() + broken.proc.stderr()).not.toContain("WrongKey0123456789abcdefABCDEFGH");
  });
});
