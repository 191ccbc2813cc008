/**
 * A handler that keeps failing, its daemon killed in the pause between two attempts (a crash
 * point right after the failed attempt's count was kept), or after its last attempt failed and
 * before its dead letter was kept: the message is caught up at the next start (a cron job's
 * occurrence under way runs again, a dialog runs its answer again from its log), and its attempts
 * go on from the count, so that the handler runs `retries.attempts` times in all (not once more
 * when they ran out: before, the start ran it a fifth time), then the message is kept as a dead
 * letter once. On the file store, and on Redis when one answers (else skipped with one line).
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type CliProcess, spawnCli } from "../support/cli.ts";
import { crashBackends } from "../support/crash-backends.ts";
import {
  botEmail,
  botSaid,
  orgWithBots,
  sayToBot,
  startE2eSandbox,
  useE2eCleanup,
} from "../support/e2e-daemon.ts";

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

/** A daily job due a few seconds after the first start (its cron kept in a file for the restart), failing every time. */
const jobBot = (cronFile: string) => `import { existsSync, readFileSync, writeFileSync } from "node:fs";
export default { setup(bot) {
  if (!existsSync(${JSON.stringify(cronFile)})) {
    const at = new Date(Date.now() + 3000);
    writeFileSync(${JSON.stringify(cronFile)}, at.getUTCSeconds() + " " + at.getUTCMinutes() + " " + at.getUTCHours() + " * * *");
  }
  bot.cron(readFileSync(${JSON.stringify(cronFile)}, "utf8"), { id: "boom-job" }, async (ctx) => {
    ctx.log.info("boom handler ran");
    throw new Error("boom failed");
  });
} };\n`;

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

describe.each(backends)("on the %s", (_name, backendFor) => {
  it.each([
    ...KINDS.map(
      ([what, kind]) => [`${what} killed in a pause between attempts`, kind, "attempt-failed@2"] as const,
    ),
    ...KINDS.map(
      ([what, kind]) => [`${what} killed after its last attempt failed`, kind, "attempts-ran-out"] as const,
    ),
  ])(
    "%s runs retries.attempts times in all, then is kept as a dead letter once",
    {
      timeout: 60_000,
    },
    async (_what, kind, point) => {
      const sandbox = await startE2eSandbox(orgWithBots(1));
      const dir = await mkdtemp(path.join(tmpdir(), "bothost-retry-crash-"));
      await writeFile(path.join(dir, "bot.mjs"), kind === "job" ? jobBot(path.join(dir, "cron")) : BOT);
      const file = path.join(dir, "bothost.yaml");
      const yaml = [
        `server:\n  url: ${sandbox.url}`,
        backendFor(dir).yaml,
        "log:\n  level: info\n  pretty: false",
        "bots:",
        `  b:\n    module: ./bot.mjs\n    email: ${botEmail(0)}\n    api_key: \${E2E_KEY}`,
        "    retries: { attempts: 4, backoff: 200ms, max_backoff: 200ms }",
      ];
      await writeFile(file, `${yaml.join("\n")}\n`);
      const env = { E2E_KEY: sandbox.control.apiKeyOf(botEmail(0)) };
      const start = async (more: Record<string, string> = {}) => {
        const daemon = spawnCli(["run", "--config", file], { env: { ...env, ...more } });
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
