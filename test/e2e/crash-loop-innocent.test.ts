/**
 * A handler that brings the process down each time it runs, and a slow handler that is under way
 * at its kills without any fault of its own: another conversation of the same bot, or another bot
 * of the same daemon. Real processes, killed by the handler itself. Once both were under way at a
 * counted kill, they run one at a time (crash-suspects.ts): the killer is kept as a dead letter
 * after `retries.attempts` counted kills, as before, and the slow run is not kept with it; it
 * answers once the killer is out of the way. On the file store, and on Redis when one answers.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type CliProcess, spawnCli } from "../support/cli.ts";
import { casesOn, crashBackends, startUntilKept } from "../support/crash-backends.ts";
import {
  botEmail,
  MEMBER,
  OWNER,
  orgWithBots,
  startE2eSandbox,
  useE2eCleanup,
} from "../support/e2e-daemon.ts";

useE2eCleanup();

const backends = await crashBackends("crash-loop-innocent");

const ATTEMPTS = 2;

/** `poison` kills the process a moment after it begins; `slow` answers after 2.5 s. */
const BOT = `export default { events: ["message"], setup(bot) {
  bot.on("message", async (ctx) => {
    const said = ctx.event.message.content;
    if (said === "poison") {
      await new Promise((r) => setTimeout(r, 300));
      ctx.log.info("poison ran");
      process.kill(process.pid, "SIGKILL");
      await new Promise(() => {});
    }
    if (said === "slow") {
      ctx.log.info("slow began");
      await new Promise((r) => setTimeout(r, 2500));
    }
    await ctx.reply("ok " + said);
  });
} };\n`;

const KEPT = "handler failed (every attempt failed): kept as dead letter";
const letters = (daemon: CliProcess) => daemon.logs().filter((l) => String(l.msg).startsWith(KEPT));

describe.each(backends)("on the %s", (name, backendFor) => {
  const places = [
    ["another conversation of the same bot", 1],
    ["another bot of the same daemon", 2],
  ] as const;
  // On Redis, two bots: each with a lease of its own to take over after each kill.
  it.each(casesOn(name, places, ([, bots]) => bots === 2))(
    "a slow run under way at each kill, in %s, is not kept with the run that kills",
    { timeout: 120_000 },
    async (_where, bots) => {
      const sandbox = await startE2eSandbox(orgWithBots(2));
      const dir = await mkdtemp(path.join(tmpdir(), "bothost-crash-innocent-"));
      await writeFile(path.join(dir, "bot.mjs"), BOT);
      const env: Record<string, string> = {};
      const yaml = [
        `server:\n  url: ${sandbox.url}`,
        backendFor(dir).yaml,
        "log:\n  level: info\n  pretty: false",
        "bots:",
      ];
      for (let i = 0; i < bots; i++) {
        env[`KEY_${i}`] = sandbox.control.apiKeyOf(botEmail(i));
        yaml.push(`  b${i}:\n    module: ./bot.mjs\n    email: ${botEmail(i)}\n    api_key: \${KEY_${i}}`);
        yaml.push(`    retries: { attempts: ${ATTEMPTS}, backoff: 200ms, max_backoff: 200ms }`);
      }
      const file = path.join(dir, "bothost.yaml");
      await writeFile(file, `${yaml.join("\n")}\n`);
      const start = () => spawnCli(["run", "--config", file], { env });
      const saidBy = (bot: number) => {
        const id = sandbox.control.users().find((u) => u.email === botEmail(bot))!.user_id;
        return sandbox.control
          .messages()
          .filter((m) => m.sender_id === id)
          .map((m) => String(m.content));
      };

      const first = start();
      await first.waitForLog((l) => l.msg === "daemon started", 20_000);
      // The killer first: at each start after a kill it is taken up first, and the slow run waits behind it.
      sandbox.control.sendAs(MEMBER, { type: "direct", to: [botEmail(0)], content: "poison" });
      const slowBot = bots - 1;
      sandbox.control.sendAs(OWNER, { type: "direct", to: [botEmail(slowBot)], content: "slow" });
      expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });

      const { killed, daemon } = await startUntilKept(start, KEPT, ATTEMPTS);
      expect(killed.length).toBe(ATTEMPTS);
      // The first counted kill came while the slow run was under way beside it.
      expect(killed[0]!.logs().some((l) => l.msg === "slow began")).toBe(true);
      await expect.poll(() => saidBy(slowBot), { timeout: 20_000 }).toContain("ok slow");
      expect(letters(daemon)).toHaveLength(1);
      expect(JSON.stringify(letters(daemon)[0])).toContain(`all ${ATTEMPTS} attempts were made`);
      daemon.kill("SIGTERM");
      expect(await daemon.exited).toEqual({ code: 0, signal: null });
      expect(saidBy(slowBot).filter((m) => m === "ok slow")).toHaveLength(1);
      expect(saidBy(0)).not.toContain("ok poison");
    },
  );
});
