/**
 * A one-second Redis restart under three instances, repeated: no message waits for its answer
 * longer than the lease ttl. Messages go out every 600 ms (the account's polls stay within the
 * server's 200 a minute) from before each restart until after
 * it; each one's delay is from its sending to the moment its answer is seen in the sandbox.
 * Needs `redis-server` on PATH (the test runs its own, to be able to restart it).
 */
import { describe, expect, it } from "vitest";
import { hasRedisServer, startInstance, useOwnRedisCluster } from "../support/cluster.ts";
import { answerCounts, send } from "../support/e2e-daemon.ts";

const available = hasRedisServer();
if (!available) console.warn("cluster redis-blip: redis-server is not on PATH: skipped");

const TTL_MS = 5_000;
const BLIPS = 4;

const startCluster = useOwnRedisCluster();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!available)("a one-second Redis restart, three instances", () => {
  it(`delays no answer by more than the lease ttl, ${BLIPS} times over`, async () => {
    const { redis, sandbox, config } = await startCluster({ prefix: "blip", ttl: `${TTL_MS}ms` });
    const instances = [];
    for (let i = 0; i < 3; i++) instances.push(await startInstance(config));
    const sb = sandbox;
    const sentAt = new Map<number, number>();
    const answeredAt = new Map<number, number>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const now = performance.now();
        for (const [id, n] of answerCounts(sb, [...sentAt.keys()]))
          if (n > 0 && !answeredAt.has(id)) answeredAt.set(id, now);
        await sleep(20);
      }
    })();
    const sendFor = async (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        sentAt.set(send(sb, `task ${sentAt.size}`), performance.now());
        await sleep(600);
      }
    };
    const delays: number[][] = [];
    for (let blip = 0; blip < BLIPS; blip++) {
      const first = sentAt.size;
      const sending = sendFor(2_000 + 1_000 + TTL_MS * 2);
      await sleep(2_000);
      await redis.restart(1_000);
      await sending;
      await expect.poll(() => answeredAt.size, { timeout: 30_000 }).toBe(sentAt.size);
      delays.push(
        [...sentAt.keys()].slice(first).map((id) => Math.round(answeredAt.get(id)! - sentAt.get(id)!)),
      );
    }
    watching = false;
    await watch;
    console.log(
      `redis-blip: worst answer delay per restart (ms): ${delays.map((d) => Math.max(...d)).join(", ")}`,
    );
    expect(delays.map((d) => Math.max(...d)).filter((ms) => ms > TTL_MS)).toEqual([]);
    // The mark of a command dropped with its connection: it waited out the whole command timeout.
    const logs = instances.flatMap((i) => i.proc.logs().map((l) => JSON.stringify(l)));
    expect(logs.filter((l) => l.includes("Command timed out"))).toEqual([]);
  }, 240_000);
});
