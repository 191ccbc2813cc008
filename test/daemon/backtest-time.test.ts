/**
 * A backtest judges each message by when it was sent: `ctx.now()` in its handlers is the
 * message's time (moving on while they run), not the time the backtest runs. The sandbox's clock
 * is set to a past night and morning; the bot's rule depends on the hour.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { loadBots } from "../../src/bot/load-bots.ts";
import { loadConfigWithSource } from "../../src/config/load-config.ts";
import { backtest } from "../../src/daemon/backtest.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";

const BOT = "night-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
/** 03:30 UTC, long before the test runs. */
const NIGHT = Date.parse("2026-01-05T03:30:00Z");

let sandbox: Sandbox | undefined;
let dir: string | undefined;

afterEach(async () => {
  await sandbox?.stop();
  sandbox = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

it("runs each message's handlers at the message's time", async () => {
  const started = Date.now();
  sandbox = await startSandbox({ clock: { now: () => NIGHT + (Date.now() - started) } });
  const { control } = sandbox;
  control.createUser({
    email: BOT,
    full_name: "Night",
    bot: "generic",
    owner: MEMBER,
    channels: ["general"],
  });
  const night = control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "up late" });
  control.advanceClock(6 * 3_600_000);
  const morning = control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "good morning",
  });

  dir = await mkdtemp(join(tmpdir(), "bothost-backtest-time-"));
  await writeFile(
    join(dir, "night.mjs"),
    [
      "export default { setup(bot) { bot.on('message', async (ctx) => {",
      "  const at = new Date(ctx.now());",
      "  if (at.getUTCHours() < 6) {",
      "    ctx.log.info({ rule: 'night' }, 'a message at night');",
      "    await ctx.reply('sent at night: ' + at.toISOString());",
      "  }",
      "}); } };",
    ].join("\n"),
  );
  const file = join(dir, "bothost.yaml");
  const apiKey = control.apiKeyOf(BOT);
  await writeFile(
    file,
    `server:\n  url: ${sandbox.url}\nstate:\n  path: ${join(dir, "state")}\nbots:\n  night:\n` +
      `    module: ${join(dir, "night.mjs")}\n    email: ${BOT}\n    api_key: ${apiKey}\n`,
  );
  const { config, source } = await loadConfigWithSource(file);
  const [loaded] = await loadBots(config, source);
  const report = await backtest({
    bot: loaded!,
    url: sandbox.url,
    apiKey,
    range: { narrows: [[]], limit: 100 },
  });

  expect(report.scanned).toBe(2);
  expect(report.findings.map((f) => [f.id, f.rules])).toEqual([[night.id, ["night"]]]);
  expect(morning.id).toBeGreaterThan(night.id);
  // What the handler read as now: the message's time (whole seconds on the wire), a little later.
  const said = JSON.stringify(report.findings[0]?.actions[0]?.call);
  const at = Date.parse(/sent at night: ([^"\\]+)/.exec(said)?.[1] ?? "");
  expect(at - NIGHT).toBeGreaterThanOrEqual(-1_000);
  expect(at - NIGHT).toBeLessThan(60_000);
});
