/**
 * A reload on an instance whose lease on a bot was lost (Redis out of reach past the lease's
 * validity: the bot stopped here, and the instance holds no lease on it) does not start the bot's
 * new version there: it stays on standby until a lease round wins the lease, so the bot is started
 * once, by whichever instance takes the lease when Redis answers again. Counted from the server:
 * one live event queue for the bot. Needs `redis-server` on PATH.
 */
import { describe, expect, it } from "vitest";
import {
  hasRedisServer,
  type Instance,
  readyzState,
  startInstance,
  taggedModule,
  useOwnRedisCluster,
} from "../support/cluster.ts";
import { botEmail } from "../support/e2e-daemon.ts";

const available = hasRedisServer();
if (!available) console.warn("reload after a lost lease: redis-server is not on PATH: skipped");

const startCluster = useOwnRedisCluster();

describe.skipIf(!available)("a reload after the instance lost a bot's lease", () => {
  it("keeps the bot stopped there until a lease round wins it: it runs on one instance", {
    timeout: 90_000,
  }, async () => {
    const { redis, sandbox, config } = await startCluster({ prefix: "reload-lost", ttl: "3s" });
    const rewrite = await taggedModule(config, "v1");
    const a = await startInstance(config);
    expect(a.started).toBe(1);
    const b = await startInstance(config);
    expect(b.standby).toEqual(["b0"]);

    await redis.down();
    await a.proc.waitForLog(
      (l) =>
        l.msg ===
        "lease lost: the bot stopped here until its lease is taken again (here or on another instance), by the instance that takes over the events left in flight",
      20_000,
    );
    await rewrite("v2");
    a.proc.kill("SIGHUP");
    await redis.up();
    const reloaded = await a.proc.waitForLog((l) => l.msg === "config reloaded", 30_000);
    expect(reloaded).toMatchObject({ restarted: ["b0"], failed: [] });

    // Whichever instance wins the lease runs the bot (a's first win is before the outage).
    const ACQUIRED = "lease acquired; starting the bot on this instance";
    const wins = (i: Instance) => i.proc.logs().filter((l) => l.msg === ACQUIRED).length;
    await expect.poll(() => wins(a) + wins(b), { timeout: 30_000 }).toBe(2);
    const won = wins(a) === 2 ? a : b;
    const other: Instance = won === a ? b : a;
    await expect.poll(() => readyzState(won.url), { timeout: 30_000 }).toBe("polling");
    // The other shows the bot on standby once its next lease round reads the winner's lease.
    await expect.poll(() => readyzState(other.url), { timeout: 30_000 }).toBe("standby");
    // One live event queue for the bot: the winner's.
    const queues = sandbox.control.queues().filter((q) => q.email === botEmail(0));
    expect(queues).toHaveLength(1);
  });
});
