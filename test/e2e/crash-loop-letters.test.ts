/**
 * A dead letter marked for replay whose handler brings the process down (out of memory, a native
 * crash, `process.exit`): each start after the kill replays it, counted as it begins, so it ends
 * as a dead letter again (its replay mark gone) after `retries.attempts` kills, instead of killing
 * every start: a message's letter, a dialog's (its replay begins the dialog again, which the next
 * start takes up from its log: that run's count ends it, and the same letter is kept again, not a
 * second), and a cron job's occurrence's (its job replays it). An
 * operator's `bothost failed retry` (and a kept webhook delivery: crash-loop-kept-delivery.test.ts)
 * goes through the same replay. Real `bothost run` processes, on the file store and on Redis.
 */
import { describe, expect, it } from "vitest";
import { RECOVERING_LINE } from "../../src/pipeline/handler-failures.ts";
import type { CliProcess } from "../support/cli.ts";
import { casesOn, crashBackends, crashProject, jobSoon, startUntilKept } from "../support/crash-backends.ts";
import { botSaid, orgWithBots, sayToBot, startE2eSandbox, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("crash-loop-letters");

/** Throws (the run becomes a dead letter); with POISON=kill, kills the process instead. */
const POISON = `if (process.env.POISON !== "kill") throw new Error("boom");
  ctx.log.info("poison ran"); process.kill(process.pid, "SIGKILL"); await new Promise(() => {});`;

/** Poisoned by the message "poison", or by the answer "poison" to the question "ask" asks. */
const BOT = `export default { events: ["message"], setup(bot) {
  bot.on("message", async (ctx) => {
    const said = ctx.event.message.content;
    if (said === "poison") { ${POISON} }
    if (said === "ask") {
      const size = await ctx.prompt("Which size?");
      if (size.text === "poison") { ${POISON} }
    }
    await ctx.reply("ok " + said);
  });
} };\n`;
const REPLIES = `bot.on("message", (ctx) => ctx.reply("ok " + ctx.event.message.content));`;

const ATTEMPTS = 2;
const said = (daemon: CliProcess, msg: string) => daemon.logs().filter((l) => l.msg === msg).length;

describe.each(backends)("on the %s", (name, backendFor) => {
  const kinds = [
    ["message", "message"],
    ["dialog's run after its answer", "dialog"],
    ["cron job's occurrence", "job"],
  ] as const;
  // On Redis, the dialog's, whose commits also carry its log.
  it.each(casesOn(name, kinds, ([, kind]) => kind === "dialog"))(
    "a replayed dead letter of a %s that kills the process each time is kept again after retries.attempts restarts",
    {
      timeout: 90_000,
    },
    async (_what, kind) => {
      const sandbox = await startE2eSandbox(orgWithBots(1));
      const bot = kind === "job" ? (dir: string) => jobSoon(dir, "poison-job", POISON, REPLIES) : () => BOT;
      const { spawn: start, cli } = await crashProject(sandbox, backendFor, bot, ATTEMPTS);

      const first = start();
      await first.waitForLog((l) => l.msg === "daemon started", 20_000);
      if (kind === "message") sayToBot(sandbox, "poison");
      if (kind === "dialog") {
        sayToBot(sandbox, "ask");
        await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(["Which size?"]);
        sayToBot(sandbox, "poison");
      }
      await first.waitForLog(
        (l) => String(l.msg).startsWith("handler failed (every attempt failed)"),
        20_000,
      );
      first.kill("SIGTERM");
      expect(await first.exited).toEqual({ code: 0, signal: null });

      // Marked for replay while no daemon runs; the code now kills the process on it.
      const listed = JSON.parse((await cli(["failed", "list", "--json"])).stdout) as { id: string }[];
      expect(listed).toHaveLength(1);
      expect((await cli(["failed", "retry", listed[0]!.id])).code).toBe(0);
      // Behind the message (the dialog) in its conversation: answered once it is out of the way. (Beside a job,
      // a message caught up at each kill would be counted and kept with it: sent afterwards.)
      if (kind !== "job") sayToBot(sandbox, "after");

      const poisoned = () => start({ POISON: "kill" });
      const { killed, daemon } = await startUntilKept(
        poisoned,
        "replayed dead letter failed again",
        ATTEMPTS + 1,
      );
      // The first replay (a clean start) is not counted; then `ATTEMPTS` counted ones.
      expect(killed.length).toBe(ATTEMPTS + 1);
      expect(said(killed[0]!, RECOVERING_LINE)).toBe(0);
      for (const d of [...killed.slice(1), daemon]) expect(said(d, RECOVERING_LINE)).toBe(1);
      expect(said(daemon, "poison ran")).toBe(0);
      const again = daemon.logs().find((l) => String(l.msg).startsWith("replayed dead letter failed again"));
      expect(JSON.stringify(again)).toContain(`all ${ATTEMPTS} attempts were made before the bot restarted`);
      if (kind === "job") sayToBot(sandbox, "after");
      await expect
        .poll(() => botSaid(sandbox).filter((m) => m === "ok after"), { timeout: 15_000 })
        .toHaveLength(1);

      // Kept, not marked: a clean stop and a start replay nothing.
      daemon.kill("SIGTERM");
      expect(await daemon.exited).toEqual({ code: 0, signal: null });
      const last = start({ POISON: "kill" });
      await last.waitForLog((l) => l.msg === "daemon started", 20_000);
      expect(said(last, "replaying a dead letter")).toBe(0);
      const kept = JSON.parse((await cli(["failed", "list", "--json"])).stdout) as unknown[];
      expect(kept).toHaveLength(1);
      last.kill("SIGTERM");
      expect(await last.exited).toEqual({ code: 0, signal: null });
    },
  );
});
