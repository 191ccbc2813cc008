/**
 * The `external-made` crash point is reached when a `ctx.external` call returned, not when a run
 * again finds its result in the records and makes no call (development.md). Before, a daemon
 * started again with the point still armed killed itself at the found result too: a takeover test
 * with the point armed on both instances lost its survivor. On the file store, and on Redis when
 * one answers (else skipped with one line).
 */
import { describe, expect, it } from "vitest";
import { crashBackends, crashProject } from "../support/crash-backends.ts";
import { botSaid, orgWithBots, sayToBot, startE2eSandbox, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("external-made-replay");

const BOT = `let calls = 0;
export default { events: ["message"], setup(bot) {
  bot.on("message", async (ctx) => {
    const n = await ctx.external("count", async () => { ctx.log.info("external called"); return ++calls; });
    await ctx.reply("made " + n);
  });
} };\n`;

describe.each(backends)("on the %s", (_name, backendFor) => {
  it("a run again that finds the call's result passes the point without stopping", {
    timeout: 60_000,
  }, async () => {
    const sandbox = await startE2eSandbox(orgWithBots(1));
    const project = await crashProject(sandbox, backendFor, () => BOT, 3);
    const armed = { BOTHOST_FAILPOINTS: "external-made" };
    const first = project.spawn(armed);
    await first.waitForLog((l) => l.msg === "daemon started", 20_000);
    sayToBot(sandbox, "go");
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(first.logs().filter((l) => l.msg === "external called")).toHaveLength(1);
    // Armed again: the result is found, no call is made, and the run goes on to its reply.
    const second = project.spawn(armed);
    await expect.poll(() => botSaid(sandbox), { timeout: 20_000 }).toEqual(["made 1"]);
    expect(second.logs().filter((l) => l.msg === "external called")).toHaveLength(0);
    second.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });
});
