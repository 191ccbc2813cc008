import { describe, expect, it } from "vitest";
import type { CliProcess } from "../support/cli.ts";
import { casesOn, crashBackends, crashProject, jobSoon } from "../support/crash-backends.ts";
import { botSaid, orgWithBots, sayToBot, startE2eSandbox, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("retry-crash");

const BOT = `export default { events: ["message"], setup(bot) {
  bot.on("message", (ctx) => ctx.event.message.content === "boom", async (ctx) => {
    ctx.log.info("boom handler ran");
    throw new Error("boom failed");
  });
  bot.on("message", (ctx) => ctx.event.message.content === "ask", async (ctx) => {
    await ctx.prompt("Which size?");
    ctx.log.info("boom handler ran");
    throw new Error("boom failed");
  });
} };\n`;

/** A daily job's handler that fails every time. */
const JOB_FAILS = `ctx.log.info("boom handler ran"); throw new Error("boom failed");`;

const runs = (daemon: CliProcess) => daemon.logs().filter((l) => l.msg === "boom handler ran").length;
const letters = (daemon: CliProcess) =>
  daemon
    .logs()
    .filter((l) => String(l.msg).startsWith("handler failed (every attempt failed): kept as dead letter"));

const KINDS = [
  ["a message", "message"],
  ["a cron job's occurrence", "job"],
  ["a dialog's run after its answer", "dialog"],
] as const;

describe.each(backends)("on the %s", (name, backendFor) => {
  const cases = [
    ...KINDS.map(
      ([what, kind]) => [`${what} killed in a pause between attempts`, kind, "attempt-failed@2"] as const,
    ),
    ...KINDS.map(
      ([what, kind]) => [`${what} killed after its last attempt failed`, kind, "attempts-ran-out"] as const,
    ),
  ];
  // On Redis, the dialog's, whose commits also carry its log.
  it.each(casesOn(name, cases, ([, kind]) => kind === "dialog"))(
    "%s runs retries.attempts times in all, then is kept as a dead letter once",
    {
      timeout: 60_000,
    },
    async (_what, kind, point) => {
      const sandbox = await startE2eSandbox(orgWithBots(1));
      const bot = kind === "job" ? (dir: string) => jobSoon(dir, "boom-job", JOB_FAILS) : () => BOT;
      const project = await crashProject(sandbox, backendFor, bot, 4);
      const start = async (more: Record<string, string> = {}) => {
        const daemon = project.spawn(more);
        await daemon.waitForLog((l) => l.msg === "daemon started", 20_000);
        return daemon;
      };
      // Killed once the second attempt failed and its count was kept (two runs made), or once the
      // fourth failed, before its dead letter was kept (four runs made).
      const first = await start({ BOTHOST_FAILPOINTS: point });
      const made = point === "attempts-ran-out" ? 4 : 2;
      if (kind === "message") sayToBot(sandbox, "boom");
      if (kind === "dialog") {
        sayToBot(sandbox, "ask");
        await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(["Which size?"]);
        sayToBot(sandbox, "large");
      }
      expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
      expect(runs(first)).toBe(made);
      // The next start catches the message up (runs the occurrence again, the dialog from its log)
      // and makes the attempts left, none when they ran out, then keeps it.
      const second = await start();
      await expect.poll(() => letters(second).length, { timeout: 30_000 }).toBe(1);
      expect(runs(second)).toBe(4 - made);
      expect(letters(second)[0]).toMatchObject({ attempts: 4 });
      if (made === 4)
        expect(JSON.stringify(letters(second)[0])).toContain(
          "all 4 attempts were made before the bot restarted",
        );
      second.kill("SIGTERM");
      expect(await second.exited).toEqual({ code: 0, signal: null });
      expect(runs(second)).toBe(4 - made);
    },
  );
});
