/**
 * Failed handlers through a real daemon and sandbox: retried with pauses while their conversation
 * waits and others go on; kept as dead letters after the last attempt (or at once for NoRetry);
 * replayed once fixed, in order, exactly once; kept for the next start when the bot stops (no failure then).
 * `bot.catch` sees each failure without switching any of that off, unless it throws NoRetry.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { NoRetry } from "../../src/errors/no-retry.ts";
import { DeadLetters } from "../../src/state/dead-letters.ts";
import { FileStore } from "../../src/state/file-store.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { gatedBackend, StoreGate } from "../support/gated-store.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "flaky-bot@sandbox.example";
const RETRIES = "retries: { attempts: 3, backoff: 100ms, max_backoff: 200ms }";

let running: InProcessDaemon | undefined;

const world = useSandbox({ bots: { [BOT]: "Flaky" } });

const post = (content: string, topic = "t") =>
  world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic, content }).id;
const answers = () => world.messagesFrom(BOT).map((m) => String(m.content));

/** A bot that answers "ok <text>", and throws what `fail` says for a message, counting runs. */
function flaky(fail: (text: string, run: number) => Error | undefined) {
  const runs = new Map<string, number>();
  const definition = defineBot({
    setup(bot: BotApi) {
      bot.on("message", { sender: MEMBER }, async (ctx) => {
        const text = ctx.event.message.content;
        const run = (runs.get(text) ?? 0) + 1;
        runs.set(text, run);
        const error = fail(text, run);
        if (error) throw error;
        await ctx.reply(`ok ${text}`);
      });
    },
  });
  return { definition, runs };
}

async function start(
  definition: ReturnType<typeof flaky>["definition"],
  extra = RETRIES,
  clock?: ManualClock,
) {
  running = await world.daemon({ flaky: { email: BOT, definition, extra } }, clock ? { clock } : {});
  return running;
}

describe("a handler that throws", () => {
  it("runs again after a pause and succeeds; its conversation's next message waits, others go on", async () => {
    const { definition, runs } = flaky((text, run) =>
      text === "wobbly" && run < 3 ? new Error("not yet") : undefined,
    );
    const d = await start(definition);
    post("wobbly", "a");
    post("after wobbly", "a");
    post("elsewhere", "b");
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["ok elsewhere", "ok wobbly", "ok after wobbly"]);
    expect(runs.get("wobbly")).toBe(3);
    expect(await d.daemon.letters.list()).toEqual([]);
    expect(d.logged("handler failed; running it again after a pause")).toHaveLength(2);
    expect(d.logged("handler succeeded on a later attempt")).toHaveLength(1);
    // The stack is said once an attempt, on `handler failed`; the pause's line names the error.
    const pauses = d.logged("handler failed; running it again after a pause") as Record<string, unknown>[];
    expect(pauses.map((l) => [l.error, "err" in l])).toEqual([
      ["Error: not yet", false],
      ["Error: not yet", false],
    ]);
  });

  it("becomes a dead letter after the last attempt, with its error and attempts; the rest is answered", async () => {
    const { definition, runs } = flaky((text) =>
      text === "poison" ? new Error("cannot digest poison") : undefined,
    );
    const d = await start(definition);
    const id = post("poison", "a");
    post("next", "a");
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["ok next"]);
    expect(runs.get("poison")).toBe(3);
    const [letter] = await d.daemon.letters.list();
    expect(letter).toMatchObject({
      id: "flaky/1",
      bot: "flaky",
      source: "queue",
      attempts: 3,
      error: { name: "Error", message: "cannot digest poison" },
      event: { type: "message", message: { id, content: "poison" } },
    });
    expect(d.logged("kept as dead letter flaky/1")).toHaveLength(1);
  });

  /** A bot whose handler waits until its signal aborts, then throws the abort's reason. */
  const stuck = defineBot({
    setup(bot: BotApi) {
      bot.on("message", { sender: MEMBER }, (ctx) => {
        const { signal } = ctx;
        return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
      });
    },
  });

  it("every attempt cut off by handler_timeout is kept with the timeout's error, not an abort's", async () => {
    const clock = new ManualClock(Date.now());
    const d = await start(stuck, `${RETRIES}\nhandler_timeout: 1s`, clock);
    post("stuck");
    const kept = async () => {
      await clock.tick(250);
      return d.daemon.letters.list();
    };
    await expect.poll(kept, { timeout: 10_000 }).toHaveLength(1);
    expect((await d.daemon.letters.list())[0]).toMatchObject({
      attempts: 3,
      error: { name: "RouterError", message: "The handler for channel:1:t ran longer than 1000 ms." },
    });
  });

  it("each attempt's timeout and pause lines name the bot, the message, its conversation and the attempt", async () => {
    const clock = new ManualClock(Date.now());
    const d = await start(stuck, `${RETRIES}\nhandler_timeout: 1s`, clock);
    const id = post("stuck", "where");
    const kept = async () => {
      await clock.tick(250);
      return d.daemon.letters.list();
    };
    await expect.poll(kept, { timeout: 10_000 }).toHaveLength(1);
    const named = { bot: "flaky", eventType: "message", messageId: id, conversation: "channel:1:where" };
    // The first attempt's line is the queue's; the later ones', the failure stage's.
    expect(d.logged("handler timed out")).toEqual([
      expect.objectContaining({ ...named, attempt: 1, msg: expect.stringContaining("the queue moved on") }),
      expect.objectContaining({ ...named, attempt: 2, msg: expect.stringContaining("later attempt") }),
      expect.objectContaining({ ...named, attempt: 3, msg: expect.stringContaining("later attempt") }),
    ]);
    // So do the pauses' lines, and the error each attempt failed with, as they and the dead letter say it.
    const error = "RouterError: The handler for channel:1:where ran longer than 1000 ms.";
    expect(d.logged("running it again after a pause")).toEqual([
      expect.objectContaining({ ...named, attempt: 1, error }),
      expect.objectContaining({ ...named, attempt: 2, error }),
    ]);
  });

  it("throwing NoRetry goes to the dead letters at once", async () => {
    const { definition, runs } = flaky((text) =>
      text === "hopeless" ? new NoRetry("malformed request") : undefined,
    );
    const d = await start(definition);
    post("hopeless");
    await expect.poll(async () => (await d.daemon.letters.list()).length, { timeout: 5_000 }).toBe(1);
    expect(runs.get("hopeless")).toBe(1);
    expect((await d.daemon.letters.list())[0]).toMatchObject({ attempts: 1, error: { name: "NoRetry" } });
  });

  it("a retried dead letter is handled once the cause is fixed, then leaves the list; nothing repeats", async () => {
    let broken = true;
    const { definition, runs } = flaky((text) =>
      broken && text === "needs fix" ? new Error("bug") : undefined,
    );
    // The daemon's time moves only when the test says: through the pauses, then to each check.
    const clock = new ManualClock(Date.now());
    const d = await start(definition, RETRIES, clock);
    post("needs fix");
    const kept = async () => {
      await clock.tick(100);
      return (await d.daemon.letters.list()).length;
    };
    await expect.poll(kept, { timeout: 10_000 }).toBe(1);
    broken = false;
    expect(await d.daemon.letters.retry({ all: true })).toEqual({ done: ["flaky/1"], missing: [] });
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["ok needs fix"]);
    await expect.poll(async () => d.daemon.letters.list(), { timeout: 5_000 }).toEqual([]);
    expect(runs.get("needs fix")).toBe(4);
    // Another retry request finds nothing marked: it replays nothing, so nothing is answered again.
    expect(await d.daemon.letters.retry({ all: true })).toEqual({ done: [], missing: [] });
    expect(d.logged("replaying a dead letter")).toHaveLength(1);
    expect(runs.get("needs fix")).toBe(4);
    expect(answers()).toEqual(["ok needs fix"]);
  });

  it("a stop during the pauses keeps the event for the next start, which handles it", async () => {
    let broken = true;
    const { definition } = flaky((text) =>
      broken && text === "interrupted" ? new Error("flaky") : undefined,
    );
    const stateDir = (await import("node:fs/promises")).mkdtemp(
      `${(await import("node:os")).tmpdir()}/bothost-failures-`,
    );
    const dir = await stateDir;
    running = await world.daemon(
      { flaky: { email: BOT, definition, extra: "retries: { attempts: 5, backoff: 30s }" } },
      { stateDir: dir },
    );
    post("interrupted");
    await expect.poll(() => running!.logged("handler failed; running it again after a pause").length).toBe(1);
    const first = running;
    await running.stop();
    // The handler's own failure is said and counted once; the stop's cut is no failure of the bot's.
    const errors = first.logs.filter((l) => (l.level as number) >= 50).map((l) => l.msg);
    expect(errors).toEqual(["handler failed"]);
    expect(first.logged("handler run cut by the bot's stop")).toMatchObject([{ level: 30, attempts: 1 }]);
    expect((await first.daemon.status()).bots[0]).toMatchObject({ handled: 0, failed: 0 });
    running = undefined;
    broken = false;
    running = await world.daemon(
      { flaky: { email: BOT, definition, extra: "retries: { attempts: 5, backoff: 30s }" } },
      { stateDir: dir },
    );
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["ok interrupted"]);
    await expect.poll(async () => running!.daemon.letters.list(), { timeout: 5_000 }).toEqual([]);
    expect((await running.daemon.status()).bots[0]).toMatchObject({ handled: 1, failed: 0 });
  });

  it("a stop during a later attempt is no failure of the handler's either", async () => {
    let runs = 0;
    const definition = defineBot({
      setup(bot: BotApi) {
        bot.on("message", { sender: MEMBER }, async (ctx) => {
          runs++;
          if (runs === 1) throw new Error("flaky");
          if (runs === 2) {
            // Slow work that honours its signal: the stop aborts it.
            const { signal } = ctx;
            await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
          }
          await ctx.reply(`ok ${ctx.event.message.content}`);
        });
      },
    });
    const dir = await mkdtemp(join(tmpdir(), "bothost-failures-"));
    const clock = new ManualClock(Date.now());
    const bots = { flaky: { email: BOT, definition, extra: RETRIES } };
    const first = await world.daemon(bots, { stateDir: dir, clock });
    running = first;
    post("cut");
    await expect.poll(() => first.logged("handler failed; running it again after a pause").length).toBe(1);
    const ran = async () => {
      await clock.tick(100);
      return runs;
    };
    await expect.poll(ran).toBe(2);
    await first.stop();
    running = undefined;
    const errors = first.logs.filter((l) => (l.level as number) >= 50);
    expect(errors).toMatchObject([{ msg: "handler failed", err: { message: "flaky" } }]);
    expect(first.logged("handler run cut by the bot's stop")).toMatchObject([{ level: 30 }]);
    expect((await first.daemon.status()).bots[0]).toMatchObject({ handled: 0, failed: 0 });
    // Kept with the handler's own error, not the stop's abort.
    const store = await FileStore.open(dir);
    const kept = await new DeadLetters(store, "flaky", { max: 10 }).list();
    await store.close();
    expect(kept).toMatchObject([{ error: { message: "flaky" } }]);
    running = await world.daemon(bots, { stateDir: dir });
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["ok cut"]);
    expect(running.logged("replaying a dead letter")).toHaveLength(1);
  });
});

describe("a stop's deadline", () => {
  it("aborts a message's run: no dead letter, and the next start runs it again once, its mark refused or not", async () => {
    let runs = 0;
    let started = false;
    const definition = defineBot({
      setup(bot: BotApi) {
        bot.on("message", { sender: MEMBER }, async (ctx) => {
          runs++;
          if (runs === 1) {
            started = true;
            // Slow work that honours its signal: the stop's deadline cuts it.
            const { signal } = ctx;
            await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
          }
          await ctx.reply(`ok ${ctx.event.message.content}`);
        });
      },
    });
    const dir = await mkdtemp(join(tmpdir(), "bothost-failures-"));
    const gate = new StoreGate();
    const up = async () => {
      // The writes of handled marks (the bot's runtime namespace) go through the gate.
      const store = gatedBackend(await FileStore.open(dir), ["flaky", "runtime"], gate);
      const bots = { flaky: { email: BOT, definition, extra: RETRIES } };
      return world.daemon(bots, { store, stateDir: join(dir, "daemon") });
    };
    running = await up();
    post("slow");
    await expect.poll(() => started).toBe(true);
    // The stop's writes of marks are refused, as when the store closes under them.
    gate.mode = "fail";
    await running.stop({ deadlineMs: 50 });
    const cut = running.logged("a message's run was cut off by the stop");
    expect(cut).toHaveLength(1);
    // bothost's own abort, in words: its stack would be bothost's timers, nothing of the bot's code.
    expect(cut[0]).toMatchObject({ error: expect.stringMatching(/^RouterError: /) });
    expect(cut[0]).not.toHaveProperty("err");
    gate.open();
    running = await up();
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["ok slow"]);
    expect(await running.daemon.letters.list()).toEqual([]);
    expect(running.logged("replaying a dead letter")).toEqual([]);
    expect(runs).toBe(2);
  });
});

describe("bot.catch", () => {
  /** A bot whose handler always fails, with an error handler that records what it saw. */
  function caught(onError: (err: unknown) => void) {
    const seen: string[] = [];
    let runs = 0;
    const definition = defineBot({
      setup(bot: BotApi) {
        bot.on("message", { sender: MEMBER }, () => {
          runs++;
          throw new Error(`failure ${runs}`);
        });
        bot.catch((err, ctx) => {
          seen.push(`${(err as Error).message} in ${ctx.event.type}`);
          onError(err);
        });
      },
    });
    return { definition, seen, runs: () => runs };
  }

  it("observes: the failure is still retried and kept as a dead letter", async () => {
    const { definition, seen, runs } = caught(() => {});
    const d = await start(definition);
    post("doomed");
    await expect.poll(async () => (await d.daemon.letters.list()).length, { timeout: 10_000 }).toBe(1);
    expect(runs()).toBe(3);
    expect(seen).toEqual(["failure 1 in message", "failure 2 in message", "failure 3 in message"]);
    expect((await d.daemon.letters.list())[0]).toMatchObject({
      attempts: 3,
      error: { name: "Error", message: "failure 3" },
    });
  });

  it("throwing NoRetry from it skips the retries; with deadLetter: false nothing is kept", async () => {
    const { definition, seen, runs } = caught((err) => {
      throw new NoRetry("handled by the bot", { cause: err, deadLetter: false });
    });
    const d = await start(definition);
    post("handled");
    post("then this", "other");
    await expect.poll(() => d.logged("deadLetter: false").length, { timeout: 10_000 }).toBe(2);
    expect(runs()).toBe(2);
    expect(seen).toEqual(["failure 1 in message", "failure 2 in message"]);
    expect(await d.daemon.letters.list()).toEqual([]);
  });

  it("throwing plain NoRetry from it keeps a dead letter at once", async () => {
    const { definition, runs } = caught((err) => {
      throw new NoRetry("give up", { cause: err });
    });
    const d = await start(definition);
    post("give up");
    await expect.poll(async () => (await d.daemon.letters.list()).length, { timeout: 10_000 }).toBe(1);
    expect(runs()).toBe(1);
    expect((await d.daemon.letters.list())[0]).toMatchObject({ attempts: 1, error: { name: "NoRetry" } });
  });
});
