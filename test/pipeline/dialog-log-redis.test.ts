/**
 * A dialog's log on Redis: each append's header write says what the header holds (the text the
 * last append wrote), so an append is one call, whatever fields a question adds to the header.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { DialogHead, LogEntry } from "../../src/pipeline/dialogs/dialog-record.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { asked, memoryDialogs, waitAt } from "../support/memory-dialogs.ts";
import {
  dropPrefix,
  monitorRedis,
  noRedisMessage,
  redisReachable,
  redisUrl,
  uniquePrefix,
} from "../support/redis.ts";

const reachable = await redisReachable();
if (!reachable) console.warn(`dialog-log-redis: ${noRedisMessage}`);

const T0 = 1_000_000_000;
const prefix = uniquePrefix("dialog-log");
let store: RedisStore;
/** A connection of the test's own, to watch the store's calls. */
let client: Redis;
beforeAll(async () => {
  if (!reachable) return;
  client = new Redis(redisUrl);
  store = await RedisStore.open({ url: redisUrl, prefix });
});
afterAll(async () => {
  await store?.close();
  client?.disconnect();
  if (reachable) await dropPrefix(prefix);
});

it.skipIf(!reachable)(
  "an answer after a question that adds a back word to the header is one call: its expectation holds",
  async () => {
    const dialogs = memoryDialogs(new ManualClock(T0), store);
    const deadline = T0 + 3_600_000;
    let head: DialogHead = await waitAt(dialogs, { id: 100, conversation: "dm:3,7", at: T0, deadline });
    head = await dialogs.append(head, [{ t: "ans", step: 0, msg: 102, text: "a1", ts: T0 / 1000 }], false);
    // The second question has a back word: a field the header did not hold before.
    const second = asked(1, 103, T0, deadline) as LogEntry & { t: "ask" };
    head = await dialogs.append(head, [{ ...second, back: "back" }], false);
    expect(head.back).toBe("back");

    const seen: string[][] = [];
    const monitor = await monitorRedis(({ source, args }) => {
      // Calls the store sent, not those its scripts made inside Redis.
      if (source !== "lua" && args.some((a) => a.startsWith(`${prefix}:`))) seen.push(args);
    });
    head = await dialogs.append(head, [{ t: "ans", step: 1, msg: 104, text: "a2", ts: T0 / 1000 }], false);
    await store.namespace("dialogs").get("after");
    // The monitor reports after the fact: wait for the last call to be seen.
    await expect.poll(() => seen.some((args) => args.some((a) => a.endsWith("/after")))).toBe(true);
    monitor.close();
    // The header's write alone; a stale expectation is refused and read: evalsha, mget, evalsha.
    expect(seen.map((args) => args[0]?.toLowerCase())).toEqual(["evalsha", "get"]);
    expect((await dialogs.record("100"))?.steps[1]?.answers.map((a) => a.text)).toEqual(["a2"]);
  },
);
