/**
 * A bot that stops (shutdown, or a reload restarting it) while a handler waits on `ctx.prompt()`,
 * against the sandbox over HTTP in a real daemon: the prompt ends at once with `PROMPT_STOPPED`,
 * so the stop waits neither for the prompt's timeout nor for the shutdown deadline (the shared
 * test clock never moves: only the stop itself can end the wait). Left uncaught, the run ends
 * like an unanswered prompt: handled, no retry, no dead letter, one info line; after a reload the
 * person's late answer reaches the new version as an ordinary message, and nothing asks again.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { type BotDefinition, defineBot } from "../../src/bot/define-bot.ts";
import { PromptError } from "../../src/index.ts";
import { PROMPT_STOPPED } from "../../src/pipeline/prompts.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { DEFAULT_WAIT_MS } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

const MEMBER = "member@sandbox.example";
const OTHER = "other@sandbox.example";
const BOT = "barista-bot@sandbox.example";
// Far beyond how long a run takes at the real pace; the clock is never moved past either.
const WAIT = 60_000;

const barista = defineBot({
  setup(bot) {
    // The answer is never given: only what ends the wait matters here.
    bot.command("order", (ctx) => ctx.prompt("Which size: small or large?", { timeout: WAIT }));
    bot.command("polite", async (ctx) => {
      try {
        await ctx.prompt("Milk or not?", { timeout: WAIT });
      } catch (err) {
        if (!(err instanceof PromptError)) throw err;
        await ctx.reply(`No answer (${err.code}): ask again any time.`);
      }
    });
  },
});

/** The version a reload brings: it answers every direct message. */
const baristaTwo = defineBot({
  setup(bot) {
    bot.on("message", { direct: true }, (ctx) => ctx.reply(`v2 heard: ${ctx.event.message.content}`));
  },
});

let clock: TestClock;
let sandbox: Sandbox;
let running: InProcessDaemon;
/** A stop or reload under way: without the prompts ending, only the shutdown deadline ends it. */
let pending: Promise<unknown> | undefined;
let stopped: boolean;
beforeEach(async () => {
  clock = new TestClock();
  sandbox = await startSandbox({ clock });
  const control = sandbox.control;
  control.createUser({ email: OTHER, full_name: "Other" });
  control.createUser({ email: BOT, full_name: "barista", bot: "generic", channels: ["general"] });
  running = await startInProcessDaemon(
    sandbox,
    // Retries as a fresh config has them, and a shutdown deadline the clock never reaches.
    { barista: { email: BOT, definition: barista, extra: "handler_timeout: 5m" } },
    { clock, global: "shutdown_timeout: 10m" },
  );
  pending = undefined;
  stopped = false;
});
afterEach(async () => {
  if (pending) {
    await clock.advance(20 * 60_000);
    await pending;
  }
  if (!stopped) await running.stop();
  await sandbox.stop();
});

const dm = (content: string) => ({ type: "direct" as const, to: [BOT], content });
const botId = () => sandbox.control.users().find((u) => u.email === BOT)!.user_id;
const botSays = (after: number) =>
  sandbox.control.waitFor(
    () => sandbox.control.messages().find((m) => m.sender_id === botId() && (m.id as number) > after),
    { timeoutMs: DEFAULT_WAIT_MS },
  );
const handled = (id: number) =>
  running.ledger.until(
    "barista",
    id,
    DEFAULT_WAIT_MS,
    () => new Error(`message ${id} was not handled: its prompt still waits`),
  );

it("a stop ends a waiting prompt at once: handled, no retry, no dead letter, one info line", async () => {
  const order = sandbox.control.sendAs(MEMBER, dm("order")).id;
  expect((await botSays(order)).content).toBe("Which size: small or large?");
  const polite = sandbox.control.sendAs(OTHER, dm("polite")).id;
  const asked = (await botSays(polite)).id as number;

  stopped = true;
  const stopping = running.stop();
  pending = stopping;
  // The caught prompt lets the handler say why, while the bot stops.
  expect((await botSays(asked)).content).toBe("No answer (PROMPT_STOPPED): ask again any time.");
  await handled(order);
  await handled(polite);
  await stopping;
  pending = undefined;

  const lines = running.logs;
  expect(lines.filter((l) => (l.level as number) >= 40).map((l) => l.msg)).toEqual([]);
  const mine = lines.filter((l) => l.messageId === order);
  expect(mine.filter((l) => /prompt/.test(String(l.msg))).map((l) => [l.level, l.msg])).toEqual([
    [30, PROMPT_STOPPED],
  ]);
  // Asked once each, no retry asked again.
  const said = sandbox.control.messages().filter((m) => m.sender_id === botId());
  expect(said.map((m) => m.content)).toEqual([
    "Which size: small or large?",
    "Milk or not?",
    "No answer (PROMPT_STOPPED): ask again any time.",
  ]);
});

it("a reload restarting the bot ends the prompt; the late answer reaches the new version", async () => {
  const order = sandbox.control.sendAs(MEMBER, dm("order")).id;
  expect((await botSays(order)).content).toBe("Which size: small or large?");

  const reloaded = running.daemon.applyReload(
    running.config,
    { add: [], remove: [], restart: ["barista"], keep: [], needRestart: [] },
    [{ name: "barista", definition: baristaTwo as BotDefinition<never, never>, settings: undefined }],
  );
  pending = reloaded;
  await handled(order);
  const report = await reloaded;
  pending = undefined;
  expect(report.failed).toEqual([]);

  const late = sandbox.control.sendAs(MEMBER, dm("large")).id;
  expect((await botSays(late)).content).toBe("v2 heard: large");
  await handled(late);
  expect(await running.daemon.letters.list("barista")).toEqual([]);
  const said = sandbox.control.messages().filter((m) => m.sender_id === botId());
  expect(said.map((m) => m.content)).toEqual(["Which size: small or large?", "v2 heard: large"]);
  expect(running.logs.filter((l) => (l.level as number) >= 40).map((l) => l.msg)).toEqual([]);
  expect(running.logged(PROMPT_STOPPED)).toHaveLength(1);
});
