/**
 * A dead letter's source says how its event reached the bot: `queue` for one delivered live by the
 * event queue, `catch-up` for one fetched at a new queue after a restart. A dialog's run takes the
 * source of the answer that ran it: before, it was always `catch-up`, even for an answer that came
 * live. A replayed letter that fails again keeps its source. A real daemon in this process
 * against the sandbox over HTTP, on the test clock.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { DeadLetter } from "../../src/state/dead-letters.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { saidAtLeast } from "../support/self-killing-bot.ts";

const BOT = "source-bot@sandbox.example";

const broken = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      throw new Error(`no ${size.text} left`);
    });
    bot.on("message", () => {
      throw new Error("not today");
    });
  },
});

let up: GatedDaemon | undefined;
afterEach(() => closeGatedDaemon(up));

async function start() {
  up = await startGatedDaemon({
    name: "source",
    email: BOT,
    fullName: "Source",
    definition: broken,
    extra: "handler_timeout: 1h\nretries: { attempts: 1 }",
  });
  return up;
}

/** The letters' sources and events' contents once there are `count` of them, oldest first. */
async function sources(count: number) {
  const list = () => up!.running.daemon.letters.list();
  await expect.poll(async () => (await list()).length, { timeout: 15_000 }).toBe(count);
  return (await list()).map((l: DeadLetter) => {
    const event = l.event as { message: { content: string } };
    return [l.source, event.message.content];
  });
}

/**
 * The bot's queue is its `registrations`th, its catch-up over (a renewal's `gap` handed on), and
 * its poll waits with nothing pending: a message sent now comes live, not caught up.
 */
async function listening(registrations: number) {
  const { control } = up!.sandbox;
  const registered = () => control.requests.filter((r) => r.path === "/register").length;
  await control.waitFor(() => registered() === registrations, { timeoutMs: 15_000 });
  const gaps = () => up!.running.daemon.bots[0]!.stats.gaps;
  await expect.poll(gaps, { timeout: 15_000 }).toBe(registrations - 1);
  const queues = () => control.queues().filter((q) => q.email === BOT);
  await control.waitFor(
    () => queues().length === 1 && queues().every((q) => q.parked && q.pending_events === 0),
    {
      timeoutMs: 15_000,
    },
  );
}

/**
 * The member ordered: the dialog waits at its question (its log kept), and the queue the
 * question renewed (to receive deletions) listens.
 */
async function ordered() {
  await listening(1);
  up!.dm("order");
  await saidAtLeast(up!.sandbox, BOT, 1);
  await expect
    .poll(() => up!.running.daemon.bots[0]!.dialogs().map((d) => d.deadline !== undefined), {
      timeout: 15_000,
    })
    .toEqual([true]);
  await listening(2);
}

it("a dialog whose answer came live by the queue fails for good: its letter's source is queue", async () => {
  await start();
  await ordered();
  up!.dm("large");
  // The letter holds the dialog's first message, the event its run replays.
  expect(await sources(1)).toEqual([["queue", "order"]]);
});

it("a dialog whose answer was caught up after a restart fails for good: its source is catch-up", async () => {
  await start();
  await ordered();
  await up!.restart(() => up!.dm("large"));
  expect(await sources(1)).toEqual([["catch-up", "order"]]);
});

it("an ordinary message's letter says queue live, catch-up when caught up after a restart", async () => {
  await start();
  await listening(1);
  up!.dm("live one");
  await sources(1);
  await up!.restart(() => up!.dm("missed one"));
  expect(await sources(2)).toEqual([
    ["queue", "live one"],
    ["catch-up", "missed one"],
  ]);
});

it("a replayed dialog letter that fails again keeps its source", async () => {
  await start();
  await ordered();
  up!.dm("large");
  await sources(1);
  await up!.running.daemon.letters.retry({ all: true });
  await expect
    .poll(async () => (await up!.running.daemon.letters.list()).map((l) => [l.source, l.attempts]), {
      timeout: 15_000,
    })
    .toEqual([["queue", 2]]);
});
