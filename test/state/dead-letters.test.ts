/**
 * Dead letters on every store the daemon can run on: memory, file (reopened, as after a restart)
 * and Redis when one answers.
 */
import { afterAll, describe, expect } from "vitest";
import { DeadLetters, parseDeadLetterId } from "../../src/state/dead-letters.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import { RedisStore } from "../../src/state/redis-store.ts";
import type { StateBackend } from "../../src/state/state-store.ts";
import { failedRun } from "../support/dead-letter.ts";
import { dropPrefix, noRedisMessage, redisReachable, redisUrl, uniquePrefix } from "../support/redis.ts";
import { test } from "../support/state.ts";

type Open = (dir: string, prefix: string) => Promise<StateBackend>;
const backends: Array<[string, Open]> = [["FileStore", (dir) => FileStore.open(dir, { autoFlushMs: 0 })]];
/** The Redis prefixes the tests used: dropped afterwards (none when no Redis answered). */
const redisPrefixes: string[] = [];
if (await redisReachable()) {
  backends.push([
    "RedisStore",
    (_dir, prefix) => {
      redisPrefixes.push(prefix);
      return RedisStore.open({ url: redisUrl, prefix });
    },
  ]);
} else {
  console.warn(`dead-letters: ${noRedisMessage}`);
}
afterAll(async () => {
  for (const prefix of redisPrefixes) await dropPrefix(prefix);
});

const failure = failedRun;

test("parseDeadLetterId splits bot and number, and refuses what is not an id", () => {
  expect(parseDeadLetterId("my-bot/12")).toEqual({ bot: "my-bot", seq: 12 });
  expect(parseDeadLetterId("12")).toBeUndefined();
  expect(parseDeadLetterId("bot/")).toBeUndefined();
  expect(parseDeadLetterId("bot/0")).toBeUndefined();
  expect(parseDeadLetterId("bot/1.5")).toBeUndefined();
});

test("letters keep their event, the redacted error and the attempts; ids are per bot", async () => {
  const store = new MemoryStore();
  const letters = new DeadLetters(store, "mod", {
    max: 10,
    redact: (t) => t.replaceAll("sekrit-key", "[hidden]"),
  });
  const err = new TypeError("server said no to sekrit-key");
  const added = await letters.add({ ...failure(1), error: err });
  expect(added.id).toBe("mod/1");
  expect(added.error.name).toBe("TypeError");
  expect(added.error.message).toBe("server said no to [hidden]");
  expect(added.error.stack).toContain("[hidden]");
  expect(JSON.stringify(await letters.list())).not.toContain("sekrit-key");

  const other = new DeadLetters(store, "greeter", { max: 10 });
  expect((await other.add(failure(2))).id).toBe("greeter/1");
  expect(await other.get("mod/1")).toBeUndefined();
  expect((await letters.get("mod/1"))?.event).toEqual(failure(1).event);
  expect((await letters.list()).map((l) => l.id)).toEqual(["mod/1"]);
});

test("a thrown non-Error is kept as its JSON", async () => {
  const letters = new DeadLetters(new MemoryStore(), "b", { max: 3 });
  const added = await letters.add({ ...failure(1), error: { code: 7 } });
  expect(added.error).toEqual({ name: "Error", message: '{"code":7}' });
});

test("past the bound the oldest letters are evicted, counted and reported", async () => {
  const evicted: string[] = [];
  const letters = new DeadLetters(new MemoryStore(), "b", { max: 3, onEvict: (l) => evicted.push(l.id) });
  for (let n = 1; n <= 5; n++) await letters.add(failure(n));
  expect((await letters.list()).map((l) => l.id)).toEqual(["b/3", "b/4", "b/5"]);
  expect(evicted).toEqual(["b/1", "b/2"]);
  expect(await letters.evicted()).toBe(2);
});

test("the bound evicts no letter marked for replay: a kept delivery or a retry asked for is work still owed", async () => {
  const evicted: string[] = [];
  const letters = new DeadLetters(new MemoryStore(), "b", { max: 2, onEvict: (l) => evicted.push(l.id) });
  // A webhook delivery kept while its bot was not ready: stored marked, answered to the server.
  await letters.add(failure(1), { retryRequestedAt: new Date("2026-11-25T12:00:00Z") });
  await letters.add(failure(2));
  await letters.requestRetry("b/2", new Date("2026-11-25T12:01:00Z"));
  await letters.add(failure(3));
  await letters.add(failure(4));
  await letters.add(failure(5));
  // The marked ones stay and count for nothing: two unmarked letters are kept besides them.
  expect((await letters.list()).map((l) => l.id)).toEqual(["b/1", "b/2", "b/4", "b/5"]);
  expect(evicted).toEqual(["b/3"]);
  // Replayed and failed again, a letter is unmarked: the bound takes it like any other.
  await letters.failedAgain("b/1", {
    error: new Error("again"),
    attempts: 1,
    lastFailedAt: "2026-11-25T12:02:00Z",
  });
  expect((await letters.list()).map((l) => l.id)).toEqual(["b/1", "b/2", "b/4", "b/5"]);
  await letters.add(failure(6));
  expect((await letters.list()).map((l) => l.id)).toEqual(["b/2", "b/5", "b/6"]);
  expect(evicted).toEqual(["b/3", "b/1", "b/4"]);
});

test("a replay cut short by the stop stays marked in the write that counts its attempts: the bound never takes it", async () => {
  const letters = new DeadLetters(new MemoryStore(), "b", { max: 1 });
  const at = new Date("2026-11-25T12:00:00Z");
  await letters.add(failure(1), { retryRequestedAt: at });
  const generation = await letters.retryGeneration();
  await letters.failedAgain("b/1", {
    error: new Error("cut short"),
    attempts: 1,
    lastFailedAt: "2026-11-25T12:01:00Z",
    retryRequestedAt: new Date("2026-11-25T12:01:00Z"),
  });
  expect(await letters.get("b/1")).toMatchObject({
    attempts: failure(1).attempts + 1,
    retryRequestedAt: "2026-11-25T12:01:00.000Z",
  });
  expect(await letters.retryGeneration()).toBe(generation + 1);
  // Other runs kept meanwhile: the bound takes unmarked letters only.
  await letters.add(failure(2));
  await letters.add(failure(3));
  expect((await letters.list()).map((l) => l.id)).toEqual(["b/1", "b/3"]);
});

test("remove and requestRetry act on one letter and say when there was none", async () => {
  const letters = new DeadLetters(new MemoryStore(), "b", { max: 3 });
  await letters.add(failure(1));
  await letters.add(failure(2));
  expect(await letters.requestRetry("b/2", new Date("2026-11-25T12:00:00Z"))).toBe(true);
  expect((await letters.get("b/2"))?.retryRequestedAt).toBe("2026-11-25T12:00:00.000Z");
  expect(await letters.requestRetry("b/9", new Date())).toBe(false);
  expect(await letters.remove("b/1")).toBe(true);
  expect(await letters.remove("b/1")).toBe(false);
  expect(await letters.remove("other/2")).toBe(false);
  expect((await letters.list()).map((l) => l.id)).toEqual(["b/2"]);
});

describe.each(backends)("%s", (name, open) => {
  test("letters and their numbering survive reopening the store", async ({ dir }) => {
    const prefix = uniquePrefix("dead");
    const first = await open(dir, prefix);
    const before = new DeadLetters(first, "b", { max: 2 });
    for (let n = 1; n <= 3; n++) await before.add(failure(n));
    await first.close();

    const second = await open(dir, prefix);
    const after = new DeadLetters(second, "b", { max: 2 });
    expect(
      (await after.list()).map((l) => l.id),
      name,
    ).toEqual(["b/2", "b/3"]);
    expect(await after.evicted()).toBe(1);
    expect((await after.add(failure(4))).id).toBe("b/4");
    await second.close();
  });
});

test("a retry request bumps the generation; a failed replay adds its attempts and unmarks the letter", async () => {
  const letters = new DeadLetters(new MemoryStore(), "b", { max: 5 });
  await letters.add(failure(1));
  await letters.add(failure(2));
  expect(await letters.retryGeneration()).toBe(0);
  await letters.requestRetry("b/1", new Date("2026-11-25T12:00:00Z"));
  expect(await letters.retryGeneration()).toBe(1);
  expect(await letters.requestRetry("b/7", new Date())).toBe(false);
  expect(await letters.retryGeneration()).toBe(1);
  expect((await letters.retryRequested()).map((l) => l.id)).toEqual(["b/1"]);

  await letters.failedAgain("b/1", {
    error: new Error("still broken"),
    attempts: 3,
    lastFailedAt: "2026-11-25T12:01:00.000Z",
  });
  const again = await letters.get("b/1");
  expect(again).toMatchObject({
    attempts: 8,
    lastFailedAt: "2026-11-25T12:01:00.000Z",
    error: { message: "still broken" },
  });
  expect(again?.retryRequestedAt).toBeUndefined();
  expect(await letters.retryRequested()).toEqual([]);
});
