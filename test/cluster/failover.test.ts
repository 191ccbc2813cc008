/**
 * Two `bothost run` instances sharing one Redis: the one running the bot is killed with SIGKILL
 * mid-stream, and the other, on the same host, finds its process gone and takes the bot over at
 * its next round (not once the lease expires), resuming from the shared cursor. Counted from the server: every message answered (only the handler the kill cut may run
 * twice), each spam message reported once, the announcement booked once, each webhook delivery
 * accepted once.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, killAll } from "../support/cli.ts";
import {
  bookings,
  type ClusterConfig,
  clusterOrg,
  postHook,
  reportsPerMessage,
  startInstance,
  writeClusterConfig,
} from "../support/cluster.ts";
import { answerCounts, expectNoSecrets, replies, send, startE2eSandbox } from "../support/e2e-daemon.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "../support/redis.ts";

const reachable = await redisReachable();
if (!reachable) console.warn(`cluster failover: ${noRedisMessage}`);

let sandbox: Sandbox | undefined;
let config: ClusterConfig | undefined;
let prefix: string | undefined;

beforeAll(assertBuilt);
afterEach(async () => {
  await killAll();
  await sandbox?.stop();
  await config?.cleanup();
  if (prefix) await dropPrefix(prefix);
  sandbox = undefined;
  config = undefined;
  prefix = undefined;
});

describe.skipIf(!reachable)("kill -9 of the instance running the bot", () => {
  it("moves the bot to the other instance; nothing lost, booked, reported or accepted twice", async () => {
    sandbox = await startE2eSandbox(clusterOrg());
    prefix = uniquePrefix("failover");
    config = await writeClusterConfig(sandbox, { redis: redisUrl, prefix, ttl: "2s" });
    const first = await startInstance(config);
    expect([first.started, first.standby]).toEqual([1, []]);
    const second = await startInstance(config);
    expect([second.started, second.standby]).toEqual([0, ["b0"]]);

    // The announcement is booked once, by the instance running the bot.
    await expect.poll(() => bookings(sandbox!, "Daily cluster note").pending, { timeout: 15_000 }).toBe(1);
    // Webhooks: the spare says 503; the runner accepts d1 once.
    expect(await postHook(second, "d1")).toEqual({
      status: 503,
      body: { error: "bot b0 runs on another instance now; try again" },
    });
    expect(await postHook(first, "d1")).toEqual({ status: 200, body: { ok: true, pid: first.proc.pid } });
    expect(await postHook(first, "d1")).toEqual({ status: 200, body: { duplicate: true } });

    const ids: number[] = [];
    const spam = new Set<number>();
    let killedAt: number | undefined;
    for (let i = 0; i < 36; i++) {
      if (killedAt === undefined && i >= 12) {
        await expect.poll(() => replies(sandbox!).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(8);
        first.proc.kill("SIGKILL");
        killedAt = i;
      }
      const id = send(sandbox, i % 4 === 0 ? `task ${i} spam` : `task ${i}`);
      ids.push(id);
      if (i % 4 === 0) spam.add(id);
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    expect(await first.proc.exited).toEqual({ code: null, signal: "SIGKILL" });
    const ACQUIRED = "lease acquired; starting the bot on this instance";
    const taken = await second.proc.waitForLog((l) => l.msg === ACQUIRED, 20_000);
    const gone = second.proc
      .logs()
      .find((l) => String(l.msg).includes("a process of this host that is gone"));
    expect(gone).toMatchObject({ bot: "b0", from: expect.stringContaining(`:${first.proc.pid}:`) });
    // The new lease's fencing token is logged, and is larger than the killed instance's.
    const before = first.proc.logs().find((l) => l.msg === ACQUIRED)?.fencingToken;
    expect(typeof before).toBe("number");
    expect(taken.fencingToken).toBeGreaterThan(before as number);
    await expect
      .poll(() => [...answerCounts(sandbox!, ids).values()].filter((n) => n === 0).length, {
        timeout: 30_000,
      })
      .toBe(0);

    // Every message answered; a duplicate only for the one handler the kill may have cut.
    const all = replies(sandbox);
    const fromFirst = all.filter((r) => r.pid === first.proc.pid);
    const fromSecond = all.filter((r) => r.pid === second.proc.pid);
    expect(fromFirst.length + fromSecond.length).toBe(all.length);
    expect(fromFirst.length).toBeGreaterThanOrEqual(8);
    expect(fromSecond.length).toBeGreaterThan(0);
    const counts = answerCounts(sandbox, ids);
    const duplicates = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    expect(duplicates.length).toBeLessThanOrEqual(1);
    for (const id of duplicates) expect(id).toBe(Math.max(...fromFirst.map((r) => r.id)));
    expect(second.proc.logs().some((l) => l.msg === "cluster: handling" && l.replayed === true)).toBe(true);

    // Each spam message reported exactly once, whichever instance handled it (or both did).
    const reports = reportsPerMessage(sandbox);
    for (const id of spam) expect([id, reports.get(id)]).toEqual([id, 1]);
    expect([...reports.keys()].every((id) => spam.has(id))).toBe(true);

    // The new runner adopted the booking instead of booking again.
    await second.proc.waitForLog((l) => l.msg === "cluster: handling");
    expect(bookings(sandbox, "Daily cluster note")).toEqual({ pending: 1, created: 1 });

    // Webhook deliveries: d1 is remembered across instances, d2 is new.
    expect(await postHook(second, "d1")).toEqual({ status: 200, body: { duplicate: true } });
    expect(await postHook(second, "d2")).toEqual({ status: 200, body: { ok: true, pid: second.proc.pid } });
    const hooks = sandbox.control.messages().map((m) => String(m.content).replace(/ pid \d+$/, ""));
    expect(hooks.filter((c) => c.startsWith("webhook "))).toEqual(["webhook d1", "webhook d2"]);

    second.proc.kill("SIGTERM");
    expect(await second.proc.exited).toEqual({ code: 0, signal: null });
    const secrets = [config.env.CLUSTER_KEY_B0!];
    expectNoSecrets(first.proc, secrets);
    expectNoSecrets(second.proc, secrets);
  });
});
