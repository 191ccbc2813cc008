/**
 * A dialog's dead letter names what ran it. One begun by `ctx.startDialog` whose first run fails
 * for good takes the source of the run that began it: `job` from a cron job, the message's
 * source from a message's handler, `inbound-webhook` from an inbound webhook, `on-start` from
 * `bot.onStart()` (before, each was `catch-up`). One run by its prompt's deadline is `deadline`,
 * passed while the bot ran or while the daemon was down (before, `queue`). A job-started dialog's
 * letter, retried, replays the dialog, not the job. A real daemon in this process on a held test
 * clock, against the sandbox over HTTP.
 */
import { request } from "undici";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { BaseContext } from "../../src/pipeline/context.ts";
import type { DeadLetter } from "../../src/state/dead-letters.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "starter-bot@sandbox.example";
const MEMBER = "member@sandbox.example";

/** What begins the dialog in this case (the job and `bot.onStart()` start one only when asked). */
let starts: "job" | "on-start" | undefined;
/** The `invite` command fails (before it starts anything) while set. */
let inviteBroken = false;

async function startFor(ctx: BaseContext<unknown>): Promise<void> {
  const member = await ctx.users.get(MEMBER);
  await ctx.startDialog(member!.user_id, "boom");
}

const starter = defineBot({
  setup(bot) {
    // The dialog the bot starts: its first run fails.
    bot.command("boom", () => {
      throw new Error("boom broke");
    });
    bot.command("invite", (ctx) => {
      if (inviteBroken) throw new Error("invite broke");
      return startFor(ctx);
    });
    bot.cron("0 * * * *", async (ctx) => {
      if (starts === "job") await startFor(ctx);
    });
    bot.onStart(async (ctx) => {
      if (starts === "on-start") await startFor(ctx);
    });
    bot.webhook("invite", { verify: { type: "none" } }, (ctx) => startFor(ctx));
    // A dialog its prompt's deadline runs: the timeout is handled badly.
    bot.command("order", async (ctx) => {
      try {
        await ctx.prompt("Which size?", { timeout: "10m" });
      } catch {
        throw new Error("no size handled badly");
      }
    });
  },
});

let up: GatedDaemon | undefined;
afterEach(async () => {
  starts = undefined;
  inviteBroken = false;
  await closeGatedDaemon(up);
});

async function start() {
  up = await startGatedDaemon({
    name: "starter",
    email: BOT,
    fullName: "Starter",
    definition: starter,
    clock: new TestClock({ held: true, start: "2030-01-07T09:20:00Z" }),
    extra: "handler_timeout: 1h\nretries: { attempts: 1 }",
    global: "http:\n  listen: 127.0.0.1:0",
  });
  return up;
}

/** The letters' sources and events' contents once there is one, with its error's message. */
async function letters() {
  const list = () => up!.running.daemon.letters.list();
  await expect.poll(async () => (await list()).length, { timeout: 15_000 }).toBe(1);
  return (await list()).map((l: DeadLetter) => {
    const event = l.event as { message: { content: string } };
    return [l.source, event.message.content, l.error.message];
  });
}

it("a dialog a cron job started, its first run failing for good, is kept with source job", async () => {
  const { clock } = await start();
  starts = "job";
  await clock.advance(40 * 60_000); // 10:00
  expect(await letters()).toEqual([["job", "boom", "boom broke"]]);
  // Retried, it is the dialog's run again (not the job's occurrence): it fails again, kept so.
  await up!.running.daemon.letters.retry({ all: true });
  const list = async () => (await up!.running.daemon.letters.list()).map((l) => [l.source, l.attempts]);
  await expect.poll(list, { timeout: 15_000 }).toEqual([["job", 2]]);
});

it("a dialog a live message's handler started is kept with that message's source, queue", async () => {
  const { dm } = await start();
  dm("invite");
  expect(await letters()).toEqual([["queue", "boom", "boom broke"]]);
});

it("a dialog a replayed letter's run started is kept with the letter's source, not replay", async () => {
  const { dm } = await start();
  inviteBroken = true;
  dm("invite");
  expect(await letters()).toEqual([["queue", "invite", "invite broke"]]);
  inviteBroken = false;
  await up!.running.daemon.letters.retry({ all: true });
  // The invite's letter is handled (it leaves the list); the dialog it started fails.
  const list = async () =>
    (await up!.running.daemon.letters.list()).map((l) => [
      l.source,
      (l.event as { message: { content: string } }).message.content,
    ]);
  await expect.poll(list, { timeout: 15_000 }).toEqual([["queue", "boom"]]);
});

it("a dialog an inbound webhook started is kept with source inbound-webhook", async () => {
  const { running } = await start();
  const res = await request(`${running.daemon.http!.url}/webhooks/starter/invite`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  expect(res.statusCode).toBe(200);
  await res.body.dump();
  expect(await letters()).toEqual([["inbound-webhook", "boom", "boom broke"]]);
});

it("a dialog bot.onStart() started is kept with source on-start", async () => {
  starts = "on-start";
  await start();
  expect(await letters()).toEqual([["on-start", "boom", "boom broke"]]);
});

it("a dialog run by its deadline passing while the bot runs is kept with source deadline", async () => {
  const { clock, dm, sandbox } = await start();
  dm("order");
  await expect.poll(() => botSaid(sandbox, BOT)).toEqual(["Which size?"]);
  await clock.advance(11 * 60_000);
  expect(await letters()).toEqual([["deadline", "order", "no size handled badly"]]);
});

it("a dialog whose deadline passed while the daemon was down is kept with source deadline", async () => {
  const { clock, dm, sandbox } = await start();
  dm("order");
  await expect.poll(() => botSaid(sandbox, BOT)).toEqual(["Which size?"]);
  await expect
    .poll(() => up!.running.daemon.bots[0]!.dialogs().map((d) => d.deadline !== undefined))
    .toEqual([true]);
  await up!.restart(() => clock.advance(11 * 60_000));
  expect(await letters()).toEqual([["deadline", "order", "no size handled badly"]]);
});
