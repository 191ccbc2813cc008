/**
 * The read of the dead letters' retry requests failed by a Redis outage: the warn line names the
 * store's code and message, no stack (an outage is no fault of the code, as every other outage
 * line says it). Its own redis-server, taken down (skipped without redis-server on PATH).
 */
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { RetryWatcher } from "../../src/daemon/retry-watcher.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { realClock } from "../../src/time/clock.ts";
import { hasRedisServer, type OwnRedis, startOwnRedis } from "../support/cluster.ts";
import { logSink } from "../support/log-lines.ts";

const available = hasRedisServer();
if (!available) console.warn("retry-watcher-outage: redis-server is not on PATH: skipped");

let redis: OwnRedis | undefined;
let store: RedisStore | undefined;
afterEach(async () => {
  await store?.close();
  await redis?.stop();
  [redis, store] = [undefined, undefined];
});

describe.skipIf(!available)("the retry requests' read during a Redis outage", () => {
  it("is said with the store's code and reason, no stack", async () => {
    redis = await startOwnRedis();
    store = await RedisStore.open({ url: redis.url, prefix: "retry-watcher-outage", commandTimeoutMs: 300 });
    const sink = logSink();
    const watcher = new RetryWatcher({ store, shared: false, clock: realClock, log: pino(sink.stream) });
    watcher.watch("b0", 0, () => {});
    await redis.down();
    await watcher.check();
    const said = sink.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(said.map((l) => [l.level, l.msg, l.code, l.err])).toEqual([
      [
        40,
        "could not read the dead letters' retry requests; trying again shortly",
        "STATE_UNAVAILABLE",
        undefined,
      ],
    ]);
    expect(String(said[0]?.reason)).toMatch(
      /^Redis at redis:\/\/127\.0\.0\.1:\d+\/0 did not complete a read/,
    );
  });
});
