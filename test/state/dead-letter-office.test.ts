import { expect, test } from "vitest";
import { DeadLetterOffice } from "../../src/state/dead-letter-office.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import { realClock } from "../../src/time/clock.ts";

const failure = (n: number) => ({
  source: "queue" as const,
  event: { type: "message", id: n },
  error: new Error(`boom ${n}`),
  attempts: 5,
  firstFailedAt: "2026-11-25T10:00:00.000Z",
  lastFailedAt: "2026-11-25T10:01:00.000Z",
});

async function office() {
  const o = new DeadLetterOffice(
    new MemoryStore(),
    new Map([
      ["mod", { max: 10 }],
      ["echo", { max: 10 }],
    ]),
    realClock,
  );
  await o.of("mod").add(failure(1));
  await o.of("mod").add(failure(2));
  await o.of("echo").add(failure(3));
  return o;
}

test("lists every bot's letters, or one bot's, and refuses a bot the config lacks", async () => {
  const o = await office();
  expect((await o.list()).map((l) => l.id)).toEqual(["mod/1", "mod/2", "echo/1"]);
  expect((await o.list("echo")).map((l) => l.id)).toEqual(["echo/1"]);
  await expect(o.list("nope")).rejects.toThrow('no bot named "nope" in the config (bots: mod, echo)');
  expect((await o.get("echo/1"))?.event).toEqual({ type: "message", id: 3 });
  expect(await o.get("mod/9")).toBeUndefined();
  await expect(o.get("gone/1")).rejects.toThrow('no bot named "gone" in the config (bots: mod, echo)');
});

test("retry and drop act on the named ids and report those that name no letter", async () => {
  const o = await office();
  // An id naming a bot that is neither configured nor has kept letters refuses them all.
  await expect(o.retry({ ids: ["mod/2", "x/1"] })).rejects.toThrow('no bot named "x" in the config');
  expect(await o.of("mod").retryRequested()).toEqual([]);
  expect(await o.retry({ ids: ["mod/2", "mod/9", "junk"] })).toEqual({
    done: ["mod/2"],
    missing: ["mod/9", "junk"],
  });
  expect((await o.of("mod").retryRequested()).map((l) => l.id)).toEqual(["mod/2"]);
  expect(await o.drop({ all: true, bot: "mod" })).toEqual({ done: ["mod/1", "mod/2"], missing: [] });
  expect((await o.list()).map((l) => l.id)).toEqual(["echo/1"]);
  expect(await o.drop({ all: true })).toEqual({ done: ["echo/1"], missing: [] });
  expect(await o.list()).toEqual([]);
});
