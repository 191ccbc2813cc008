/**
 * A dialog's run that failed on the state store's outage and waits for the store, then throws
 * NoRetry in the attempt the bot's stop cut off, is left to the dialog's log (the next start runs
 * it again), whatever ran it: an answer (`queue`) or its question's deadline (`deadline`). A real
 * daemon in this process against the sandbox over HTTP, on a held test clock; the bot's
 * `ctx.state` writes pass a gate.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { NoRetry } from "../../src/errors/no-retry.ts";
import { STORE_WAIT_LINE } from "../../src/pipeline/handler-failures.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "sizes-bot@sandbox.example";

/** The dialog's runs past its question; `release` lets the one waiting go on. */
let runs = 0;
let release: (() => void) | undefined;

const sizes = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      try {
        await ctx.prompt("Which size?", { timeout: "10m" });
      } catch {
        // No answer by the deadline: the run goes on all the same.
      }
      runs++;
      // The first run meets the outage; the second waits for the test, then gives up.
      if (runs === 1) await ctx.state.immediate.set("size", 1);
      if (runs >= 3) return ctx.reply("Done.");
      await new Promise<void>((go) => {
        release = go;
      });
      throw new NoRetry("given up");
    });
  },
});

let up: GatedDaemon | undefined;
afterEach(async () => {
  runs = 0;
  release = undefined;
  await closeGatedDaemon(up);
});

const poll = <T>(value: () => T | Promise<T>) => expect.poll(value, { timeout: 15_000 });

it.each([
  ["an answer", "queue"],
  ["its question's deadline", "deadline"],
])(
  "a dialog's run (ran by %s) waiting for the store, NoRetry when the stop cut it off: run again at the next start",
  async (_, by) => {
    const gate = new StoreGate();
    up = await startGatedDaemon({
      name: "sizes",
      email: BOT,
      fullName: "Sizes",
      definition: sizes,
      gate,
      gated: "kv",
      clock: new TestClock({ held: true }),
      extra: "handler_timeout: 1h\nretries: { attempts: 1 }",
    });
    const { clock, dm, sandbox, running } = up;
    dm("order");
    await poll(() => botSaid(sandbox, BOT)).toEqual(["Which size?"]);
    gate.mode = "fail";
    if (by === "queue") dm("large");
    else await clock.advance(11 * 60_000);
    await poll(() => running.logged(STORE_WAIT_LINE).length).toBe(1);
    gate.open();
    await clock.advance(1_000);
    await poll(() => release !== undefined).toBe(true);
    const bot = running.daemon.bots[0]!;
    const stopped = bot.stop(1_000);
    release!();
    await stopped;
    expect(running.logged("a run waiting for the state store was cut off by the stop")).toHaveLength(1);
    expect(await running.daemon.letters.list()).toEqual([]);
    await bot.start();
    await poll(() => botSaid(sandbox, BOT)).toEqual(["Which size?", "Done."]);
    expect(runs).toBe(3);
  },
);
