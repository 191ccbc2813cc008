import { describe, expect, it } from "vitest";
import { RECOVERING_LINE } from "../../src/pipeline/handler-failures.ts";
import type { CliProcess } from "../support/cli.ts";
import { casesOn, crashBackends, crashProject, jobSoon, startUntilKept } from "../support/crash-backends.ts";
import { botSaid, orgWithBots, sayToBot, startE2eSandbox, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("crash-loop");

const KILL = `ctx.log.info("poison ran"); process.kill(process.pid, "SIGKILL"); await new Promise(() => {});`;

const BOT = `export default { events: ["message"], setup(bot) {
  bot.on("message", async (ctx) => {
    const said = ctx.event.message.content;
    if (said === "poison") { ${KILL} }
    if (said === "ask") {
      const size = await ctx.prompt("Which size?");
      if (size.text === "poison") { ${KILL} }
    }
    await ctx.reply("ok " + said);
  });
} };\n`;

/** Its first call waits for the occurrence's under-way mark: a kill before it is a missed occurrence. */
const JOB = `await ctx.external("probe", () => 1); ${KILL}`;
const REPLIES = `bot.on("message", (ctx) => ctx.reply("ok " + ctx.event.message.content));`;

const ATTEMPTS = 2;
const letters = (daemon: CliProcess) =>
  daemon
    .logs()
    .filter((l) => String(l.msg).startsWith("handler failed (every attempt failed): kept as dead letter"));
const said = (daemon: CliProcess, msg: string) => daemon.logs().filter((l) => l.msg === msg).length;

describe.each(backends)("on the %s", (name, backendFor) => {
  const kinds = [
    ["a message", "message"],
    ["a dialog's run after its answer", "dialog"],
    ["a cron job's occurrence", "job"],
  ] as const;
  // On Redis, the dialog's, whose commits also carry its log.
  it.each(casesOn(name, kinds, ([, kind]) => kind === "dialog"))(
    "%s that kills the process each time is kept as a dead letter after retries.attempts restarts",
    { timeout: 90_000 },
    async (_what, kind) => {
      const sandbox = await startE2eSandbox(orgWithBots(1));
      const bot = kind === "job" ? (dir: string) => jobSoon(dir, "poison-job", JOB, REPLIES) : () => BOT;
      const { spawn: start } = await crashProject(sandbox, backendFor, bot, ATTEMPTS);

      const first = start();
      await first.waitForLog((l) => l.msg === "daemon started", 20_000);
      expect(said(first, RECOVERING_LINE)).toBe(0);
      if (kind === "message") sayToBot(sandbox, "poison");
      if (kind === "dialog") {
        sayToBot(sandbox, "ask");
        await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(["Which size?"]);
        sayToBot(sandbox, "poison");
      }
      // Behind it in its conversation: answered once the poison is out of the way.
      sayToBot(sandbox, "after");
      expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });

      // Each start after a kill takes the run up again, counted: `ATTEMPTS` more kills, then it is kept.
      const { killed, daemon } = await startUntilKept(
        start,
        "handler failed (every attempt failed)",
        ATTEMPTS,
      );
      expect(killed.length).toBe(ATTEMPTS);
      for (const d of [...killed, daemon]) expect(said(d, RECOVERING_LINE)).toBe(1);
      for (const d of killed) expect(said(d, "poison ran")).toBe(1);
      expect(said(daemon, "poison ran")).toBe(0);
      expect(letters(daemon)).toHaveLength(1);
      expect(JSON.stringify(letters(daemon)[0])).toContain(
        `all ${ATTEMPTS} attempts were made before the bot restarted`,
      );
      await expect
        .poll(() => botSaid(sandbox).filter((m) => m === "ok after"), { timeout: 15_000 })
        .toHaveLength(1);

      // A clean stop leaves no recovery: a message sent while down is caught up as usual.
      daemon.kill("SIGTERM");
      expect(await daemon.exited).toEqual({ code: 0, signal: null });
      sayToBot(sandbox, "later");
      const last = start();
      await expect
        .poll(() => botSaid(sandbox).filter((m) => m === "ok later"), { timeout: 20_000 })
        .toHaveLength(1);
      expect(said(last, RECOVERING_LINE)).toBe(0);
      last.kill("SIGTERM");
      expect(await last.exited).toEqual({ code: 0, signal: null });
      expect(botSaid(sandbox).filter((m) => m === "ok after")).toHaveLength(1);
    },
  );
});
