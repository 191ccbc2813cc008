/**
 * An instance of a cluster on which every bot fails to start, not at its own start (the bot was
 * on standby then, run by another instance) but later, when a round gives it the bot: it can run
 * none of them, so it stops as a lone daemon would, with the same lines and exit code. Two
 * `bothost run` instances sharing one Redis; the second one's key is wrong, or its bot's setup
 * declares a cron job bothost refuses.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
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

  it("exits 2, as check does, when each later start refused a declaration of the bot's setup", async () => {
    const { config } = await startCluster({ ttl: "3s" });
    const healthy = await startInstance(config);
    expect(healthy.started).toBe(1);
    // The same bot b0, deployed to the second instance with a cron expression of 4 fields.
    const dir = path.dirname(config.file);
    await writeFile(
      path.join(dir, "refused.mjs"),
      'export default { setup(bot) { bot.cron("* * * *", () => {}); bot.on("message", () => {}); } };\n',
    );
    const file = path.join(dir, "refused.yaml");
    await writeFile(
      file,
      (await readFile(config.file, "utf8")).replace(/module: .*/, "module: ./refused.mjs"),
    );
    const broken = await startInstance({ ...config, file });
    expect(broken.standby).toEqual(["b0"]);

    healthy.proc.kill("SIGTERM");
    expect(await broken.proc.exited).toEqual({ code: 2, signal: null });
    expect(broken.proc.stderr()).toContain("bothost: no bot could start, so the daemon stops:\n  b0: ");
  });
});
