/**
 * A one-second Redis restart under three instances, repeated: no command waits out its timeout,
 * every instance reconnects, and each message sent before, during and after a restart is
 * answered, in the order sent (a second time for at most one message a restart: its record was
 * cut). When the bot moves (a restart outlasting its lease under load), one instance answers
 * after the other, never both in turn. Messages go out every 600 ms (the account's polls stay
 * within the server's 200 a minute), the restart starting after the third of each round.
 * Needs `redis-server` on PATH (the test runs its own, to be able to restart it).
 */
import { describe, expect, it } from "vitest";
import { hasRedisServer, type Instance, startInstance, useOwnRedisCluster } from "../support/cluster.ts";
import { replies, send, waitForAnswers } from "../support/e2e-daemon.ts";

const available = hasRedisServer();
if (!available) console.warn("cluster redis-blip: redis-server is not on PATH: skipped");

const TTL_MS = 5_000;
const BLIPS = 4;
/** Messages per restart: from before it until two lease ttls after it. */
const SENDS = 22;

const startCluster = useOwnRedisCluster();

describe.skipIf(!available)("a one-second Redis restart, three instances", () => {
  it(`answers every message in order, one instance at a time, ${BLIPS} times over`, async () => {
    const { redis, sandbox, config } = await startCluster({ prefix: "blip", ttl: `${TTL_MS}ms` });
    const instances: Instance[] = [];
    for (let i = 0; i < 3; i++) instances.push(await startInstance(config));
    const logged = (msg: string) => instances.map((i) => i.proc.logs().filter((l) => l.msg === msg).length);
    const sent: number[] = [];
    for (let blip = 0; blip < BLIPS; blip++) {
      const restored = logged("redis connection restored");
      let restarting: Promise<void> | undefined;
      for (let i = 0; i < SENDS; i++) {
        if (i === 3) restarting = redis.restart(1_000);
        sent.push(send(sandbox, `task ${sent.length}`));
        await new Promise((resolve) => setTimeout(resolve, 600)); // the traffic's pace, not a wait
      }
      await restarting;
      // Every instance lost its connections (state and leases) and got them back.
      await expect
        .poll(() => logged("redis connection restored").every((n, i) => n - restored[i]! >= 2), {
          timeout: 30_000,
        })
        .toBe(true);
      await waitForAnswers(sandbox, sent, 30_000);
    }
    // In order. Handling is at least once: a restart may cut the write recording a message as
    // handled, which then runs again. Under load a restart can outlast the holder's lease, and
    // the bot moves: then the new holder answers all that follows, the old one nothing more.
    const answers = replies(sandbox);
    expect([...new Set(answers.map((r) => r.id))]).toEqual(sent);
    expect(answers.length - sent.length).toBeLessThanOrEqual(BLIPS);
    const runs = answers.map((r) => r.pid).filter((pid, i, all) => i === 0 || all[i - 1] !== pid);
    expect(new Set(runs).size).toBe(runs.length);
    const acquired = logged("lease acquired; starting the bot on this instance").reduce((a, b) => a + b);
    expect(acquired).toBeGreaterThanOrEqual(runs.length); // each instance answering took the lease
    const logs = instances.flatMap((i) => i.proc.logs().map((l) => JSON.stringify(l)));
    // The mark of a command dropped with its connection: it waited out the whole command timeout.
    expect(logs.filter((l) => l.includes("Command timed out"))).toEqual([]);
  }, 240_000);
});
