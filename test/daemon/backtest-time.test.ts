/**
 * A backtest judges each message by when it was sent: `ctx.now()` in its handlers is the
 * message's time (moving on while they run), not the time the backtest runs. The sandbox's clock
 * is set to a past night and morning; the bot's rule depends on the hour. The account's call
 * budget counts real calls in real time, so a handler that paces its calls by it (`ctx.progress`)
 * is not held back by the distance between the two clocks.
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

/** A sandbox whose clock reads a night of the past, `BOT` in #general, and a config for `module`. */
async function nightProject(module: string) {
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
  dir = await mkdtemp(join(tmpdir(), "bothost-backtest-time-"));
  await writeFile(join(dir, "bot.mjs"), module);
  const file = join(dir, "bothost.yaml");
  const apiKey = control.apiKeyOf(BOT);
  await writeFile(
    file,
    `server:\n  url: ${sandbox.url}\nstate:\n  path: ${join(dir, "state")}\nbots:\n  night:\n` +
      `    module: ${join(dir, "bot.mjs")}\n    email: ${BOT}\n    api_key: ${apiKey}\n`,
  );
  const { config, source } = await loadConfigWithSource(file);
  const [loaded] = await loadBots(config, source);
  const run = () =>
    backtest({ bot: loaded!, url: sandbox!.url, apiKey, range: { narrows: [[]], limit: 100 } });
  return { control, run };
}

afterEach(async () => {
  await sandbox?.stop();
  sandbox = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

it("runs each message's handlers at the message's time", async () => {
  const { control, run } = await nightProject(
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
  const night = control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "up late" });
  control.advanceClock(6 * 3_600_000);
  const morning = control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "good morning",
  });
  const report = await run();

  expect(report.scanned).toBe(2);
  expect(report.findings.map((f) => [f.id, f.rules])).toEqual([[night.id, ["night"]]]);
  expect(morning.id).toBeGreaterThan(night.id);
  // What the handler read as now: the message's time (whole seconds on the wire), a little later.
  const said = JSON.stringify(report.findings[0]?.actions[0]?.call);
  const at = Date.parse(/sent at night: ([^"\\]+)/.exec(said)?.[1] ?? "");
  expect(at - NIGHT).toBeGreaterThanOrEqual(-1_000);
  expect(at - NIGHT).toBeLessThan(60_000);
});

it("paces a progress's edits by the account's real calls, not by the message's time", {
  timeout: 30_000,
}, async () => {
  const { control, run } = await nightProject(
    [
      "export default { setup(bot) { bot.on('message', async (ctx) => {",
      "  const progress = await ctx.progress('Working…');",
      "  progress.append('first part, ');",
      "  progress.append('second part');",
      "  await progress.done();",
      "}); } };",
    ].join("\n"),
  );
  const asked = control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "go" });
  // Months before the test runs, as a backtest's messages are: before, the progress's edits waited
  // until the message's time caught up with the calls the budget had seen (hours here).
  const report = await run();
  expect(report.findings.map((f) => f.id)).toEqual([asked.id]);
  const calls = report.findings[0]!.actions.map((a) => `${a.call.method} ${a.call.path}`);
  expect(calls[0]).toBe("POST /messages");
  const edits = report.findings[0]!.actions.filter((a) => a.call.method === "PATCH");
  expect(JSON.stringify(edits.at(-1)?.call.params)).toContain("first part, second part");
});

it("follows a dialog through the history: each answer answers its question, a deadline passes by the messages' time", async () => {
  const { control, run } = await nightProject(
    [
      "export default { setup(bot) { bot.command('order', async (ctx) => {",
      "  ctx.log.info({ rule: 'order' }, 'an order');",
      "  try {",
      "    const size = await ctx.prompt('Which size?', { choices: ['small', 'large'], timeout: '10m' });",
      "    ctx.log.info({ rule: 'size' }, 'a size');",
      "    const count = await ctx.prompt('How many?', { timeout: '10m' });",
      "    ctx.log.info({ rule: 'count' }, 'a count');",
      "    await ctx.reply(count.text + ' x ' + size.value);",
      "  } catch (err) {",
      "    if (err.code !== 'PROMPT_TIMEOUT') throw err;",
      "    await ctx.reply('no answer in time');",
      "  }",
      "}); } };",
    ].join("\n"),
  );
  const dm = (content: string) => control.sendAs(MEMBER, { type: "direct", to: [BOT], content }).id;
  const ids = [dm("order"), dm("large"), dm("2")];
  ids.push(dm("order"));
  control.advanceClock(11 * 60_000);
  ids.push(dm("hello"));
  const report = await run();
  const said = (id: number) =>
    report.findings
      .find((f) => f.id === id)
      ?.actions.map((a) => (a.call.params as { content?: string }).content);
  expect(said(ids[0]!)).toEqual(["Which size?\n1. small\n2. large"]);
  expect(said(ids[1]!)).toEqual(["How many?"]);
  expect(said(ids[2]!)).toEqual(["2 x large"]);
  expect(said(ids[3]!)).toEqual(["Which size?\n1. small\n2. large"]);
  // Sent past the deadline: the prompt's timeout branch, then an ordinary message (not a command).
  expect(said(ids[4]!)?.[0]).toBe("no answer in time");
  expect(said(ids[4]!)?.slice(1).join()).toContain("hello");
  // The rules its handler logs at each step are the rules of the message that step answered.
  const rules = (id: number) => report.findings.find((f) => f.id === id)?.rules;
  expect([ids[0], ids[1], ids[2]].map((id) => rules(id!))).toEqual([["order"], ["size"], ["count"]]);
});
