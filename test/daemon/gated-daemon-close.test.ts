/**
 * The gated daemon of the dialog and store fault tests (test/support/gated-daemon.ts), started
 * again by a case: the cleanup stops the daemon started last, not the first one again (which
 * left the new one running, polling a sandbox gone, into the next file's time), and a restart
 * the cleanup came during starts no daemon. A real daemon in this process against the sandbox
 * over HTTP.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { deferred } from "../support/deferred.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";

const echo = defineBot({
  setup(bot) {
    bot.on("message", (ctx) => ctx.reply(`heard: ${ctx.text}`));
  },
});

let up: GatedDaemon | undefined;
afterEach(() => closeGatedDaemon(up));

const start = async () => {
  up = await startGatedDaemon({
    name: "echo",
    email: "echo-bot@sandbox.example",
    fullName: "Echo",
    definition: echo,
  });
  return up;
};
const stopped = (running: GatedDaemon["running"]) => running.logged("daemon stopped").length;

it("the daemon a restart started is the one running, and the one the cleanup stops", async () => {
  const gated = await start();
  const first = gated.running;
  const again = await gated.restart();
  await closeGatedDaemon(gated);
  expect([stopped(first), stopped(again)]).toEqual([1, 1]);
  expect(gated.running).toBe(again);
});

it("a restart the cleanup came during starts no daemon", async () => {
  const gated = await start();
  const held = deferred();
  const restarting = gated.restart(() => held.promise);
  restarting.catch(() => {});
  await expect.poll(() => stopped(gated.running)).toBe(1);
  const closing = closeGatedDaemon(gated);
  held.resolve();
  await closing;
  await expect(restarting).rejects.toThrow("closed during its restart");
});
