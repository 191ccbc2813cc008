/**
 * A bot's `rate_limit` (the account's rules where an administrator changed them) reaches its
 * client: the budgets and the poll pacing use it, and the status shows it.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { formatStatus } from "../../src/cli/status.ts";
import type { Daemon } from "../../src/daemon/daemon.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { parsePrometheus, sampleValue } from "../support/prometheus-text.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const BOT = "raised-bot@sandbox.example";
let running: InProcessDaemon | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

const world = useSandbox({ bots: { [BOT]: "Raised" } });
const quiet = defineBot({
  setup(bot) {
    bot.on("message", () => {});
  },
});

it("gives the bot's client the account's rules from the config", async () => {
  // As an administrator gives the account: the server's own rule, and the config saying so.
  world.sandbox.control.setUserRateLimit(BOT, [
    [60, 2000],
    [3600, 20000],
  ]);
  running = await world.daemon({
    raised: { email: BOT, definition: quiet, extra: "rate_limit: { per_minute: 2000, per_hour: 20000 }" },
  });
  const budget = (await running.daemon.status()).bots[0]!.budget!;
  expect([budget.events, budget.other].map((b) => [b.perMinute, b.perHour])).toEqual([
    [2000, 20000],
    [2000, 20000],
  ]);
  // Sustained polls settle to 18,000 an hour (the hour less its headroom), not to 2 s apart.
  expect(budget.steadyPollSpacingSeconds).toBe(0.2);
  expect(formatStatus(await running.daemon.status())).toMatch(/event queue \d+\/20000/);
});

it("keeps the server's defaults when the config says nothing", async () => {
  running = await world.daemon({ raised: { email: BOT, definition: quiet } });
  const budget = (await running.daemon.status()).bots[0]!.budget!;
  expect([budget.events, budget.other].map((b) => [b.perMinute, b.perHour])).toEqual([
    [200, 2000],
    [200, 2000],
  ]);
  expect(budget.steadyPollSpacingSeconds).toBe(2);
});

it("a start the server's 429 holds says so in the status, and until when", async () => {
  // The account's hour spent before this start (by a restart loop, say).
  world.sandbox.control.setUserRateLimit(BOT, [
    [60, 200],
    [3600, 2],
  ]);
  const auth = `Basic ${btoa(`${BOT}:${world.sandbox.control.apiKeyOf(BOT)}`)}`;
  for (let i = 0; i < 2; i++)
    await fetch(`${world.sandbox.url}/api/v1/users/me`, { headers: { authorization: auth } });
  let daemon: Daemon | undefined;
  const starting = world.daemon(
    { raised: { email: BOT, definition: quiet } },
    {
      created: (d) => {
        daemon = d;
      },
    },
  );
  await expect.poll(() => world.sandbox.control.rateLimitCount(BOT, "other").refused).toBe(1);
  // The server counted its 429 when it sent it: the daemon's client reads it a moment later.
  const held =
    /^the server refused its calls for the account's rate limit \(429\): none before \d{4}-\d\d-\d\dT/;
  await expect.poll(async () => (await daemon!.status()).bots[0]!.reason).toMatch(held);
  const bot = (await daemon!.status()).bots[0]!;
  expect(bot.state).toBe("starting");
  expect(Date.parse(bot.reason!.split("none before ")[1]!) - Date.now()).toBeGreaterThan(3_500_000);
  expect(formatStatus(await daemon!.status())).toContain(`raised: ${bot.reason}`);
  await daemon!.stop({ deadlineMs: 0 });
  running = await starting;
});

it("a running bot whose polls a 429 holds says so in the status and /readyz, and until when", async () => {
  running = await world.daemon(
    { raised: { email: BOT, definition: quiet } },
    { global: "http:\n  listen: 127.0.0.1:0" },
  );
  const readyz = async () =>
    (await (await fetch(`${running!.daemon.http!.url!}/readyz`)).json()) as {
      bots: { ready: boolean; reason?: string }[];
    };
  expect((await readyz()).bots[0]!.ready).toBe(true);
  // Another client spends the account's hour: the bot's next poll (once a message ends the one
  // parked now) is refused until the oldest call leaves the hour.
  const spent = world.sandbox.control.rateLimitCount(BOT, "events").calls;
  world.sandbox.control.setUserRateLimit(BOT, [
    [60, 200],
    [3600, spent],
  ]);
  world.sandbox.control.sendAs("owner@sandbox.example", { type: "direct", to: [BOT], content: "hi" });
  await expect.poll(() => world.sandbox.control.rateLimitCount(BOT, "events").refused).toBe(1);
  const held =
    /^the server refused its calls for the account's rate limit \(429\): none before \d{4}-\d\d-\d\dT/;
  await expect.poll(async () => (await running!.daemon.status()).bots[0]!.reason).toMatch(held);
  const bot = (await running.daemon.status()).bots[0]!;
  expect(bot.state).toBe("running");
  expect(Date.parse(bot.reason!.split("none before ")[1]!) - Date.now()).toBeGreaterThan(3_500_000);
  // Not ready (no event comes for an hour), and why: not "no word from the server" later on.
  expect((await readyz()).bots[0]).toMatchObject({ ready: false, reason: bot.reason });
  // The polls' wait counts as the client's own waits do, an hour of it at once.
  const metrics = async () =>
    parsePrometheus(await (await fetch(`${running!.daemon.http!.url!}/metrics`)).text());
  const raised = { bot: "raised" };
  await expect
    .poll(async () => sampleValue(await metrics(), "bothost_rate_limit_waits_total", raised))
    .toBe(1);
  expect(sampleValue(await metrics(), "bothost_rate_limit_wait_seconds_total", raised)).toBeGreaterThan(
    3_500,
  );
});

it("the budget of a bot whose polls a 429 holds says they wait, until when, in text and JSON", async () => {
  running = await world.daemon({ raised: { email: BOT, definition: quiet } });
  // The server refuses the bot's next poll (once a message ends the one parked now) for 70 s.
  world.sandbox.control.rateLimitNext(1, 70);
  world.sandbox.control.sendAs("owner@sandbox.example", { type: "direct", to: [BOT], content: "hi" });
  await expect.poll(async () => (await running!.daemon.status()).bots[0]!.budget!.events.rateLimited).toBe(1);
  const bot = (await running.daemon.status()).bots[0]!;
  const until = bot.reason!.split("none before ")[1]!;
  expect(bot.budget!.events.waitUntil).toBe(until);
  expect(bot.budget!.other.waitUntil).toBeUndefined();
  const line = formatStatus(await running.daemon.status())
    .split("\n")
    .find((l) => l.startsWith("raised: calls used this hour"));
  expect(line).toMatch(new RegExp(`; polls wait until ${until.replace(/\./g, "\\.")} \\(429\\)$`));
});

it("the budget of a bot whose sends a 429 holds says until when, in text and JSON", async () => {
  const echo = defineBot({
    setup(bot) {
      bot.on("message", (ctx) => ctx.reply("seen"));
    },
  });
  running = await world.daemon({ raised: { email: BOT, definition: echo } });
  // Another client spends the account's hour of other calls: the bot's reply is refused for it.
  const count = world.sandbox.control.rateLimitCount;
  const spent = count(BOT, "other").calls;
  expect(spent).toBeGreaterThan(count(BOT, "events").calls + 2);
  world.sandbox.control.setUserRateLimit(BOT, [
    [60, 200],
    [3600, spent],
  ]);
  world.sandbox.control.sendAs("owner@sandbox.example", { type: "direct", to: [BOT], content: "hi" });
  await expect.poll(() => count(BOT, "other").refused).toBeGreaterThan(0);
  await expect
    .poll(async () => (await running!.daemon.status()).bots[0]!.budget!.other.waitUntil)
    .toBeDefined();
  const budget = (await running.daemon.status()).bots[0]!.budget!;
  expect(Date.parse(budget.other.waitUntil!) - Date.now()).toBeGreaterThan(3_000_000);
  expect(budget.events.waitUntil).toBeUndefined();
  const line = formatStatus(await running.daemon.status())
    .split("\n")
    .find((l) => l.startsWith("raised: calls used this hour"));
  expect(line).toContain(`(1× 429), held until ${budget.other.waitUntil}; polls `);
});
