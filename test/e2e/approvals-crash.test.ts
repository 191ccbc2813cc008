/**
 * The approvals bot (bots/approvals.ts) under `bothost run`, killed (kill -9) in the windows that
 * matter between an approver's button press (a reaction) and the outcome, then started again on
 * the same state: as the events that carry the press reach it (before it reads them: the press
 * is caught up from the question's reactions); right after the press was read and its answer
 * logged (`answer-logged`); with the outcome's send held by the sandbox (never made), and made
 * with its answer unread. Each time the topic reads the question once, the outcome once, and the
 * next request there is asked (no request left waiting).
 */
import { expect, it } from "vitest";
import {
  APPROVED,
  approve,
  ask,
  BOT,
  buttonsOn,
  dead,
  expectOutcomeOnce,
  killAtSend,
  question,
  REQ,
  setUp,
  topic,
} from "../support/approvals-daemon.ts";
import { postedBy, useShippedBots } from "../support/shipped-bot.ts";

useShippedBots();

it("killed as the button press reached it, before it was read: caught up from the question's reactions", {
  timeout: 30_000,
}, async () => {
  const bot = await setUp();
  const daemon = await bot.start();
  bot.sandbox.control.sendAs(REQ, { ...topic, content: ask("api 1.4.2") });
  const id = await buttonsOn(bot, question("api 1.4.2"));
  bot.onResponse = (r) => {
    const events = (r.body as { events?: Array<{ type: string; op?: string }> }).events ?? [];
    if (r.route !== "/events" || !events.some((e) => e.type === "reaction" && e.op === "add")) return;
    bot.onResponse = undefined;
    daemon.kill("SIGKILL");
  };
  await approve(bot, id);
  await dead(daemon);
  expect(postedBy(bot.sandbox, BOT)).toEqual([question("api 1.4.2")]);
  await expectOutcomeOnce(bot);
});

it("killed after the button press was read and logged, before the outcome was posted", {
  timeout: 30_000,
}, async () => {
  const bot = await setUp();
  const armed = await bot.start({ BOTHOST_FAILPOINTS: "answer-logged" });
  bot.sandbox.control.sendAs(REQ, { ...topic, content: ask("api 1.4.2") });
  await approve(bot, await buttonsOn(bot, question("api 1.4.2")));
  // It killed itself there.
  expect(await armed.exited).toEqual({ code: null, signal: "SIGKILL" });
  expect(postedBy(bot.sandbox, BOT)).toEqual([question("api 1.4.2")]);
  await expectOutcomeOnce(bot);
});

it.each([
  ["held, never made", false],
  ["made, its answer unread", true],
])("killed during the outcome's send (%s)", { timeout: 30_000 }, async (_name, made) => {
  const bot = await setUp();
  const daemon = await bot.start();
  bot.sandbox.control.sendAs(REQ, { ...topic, content: ask("api 1.4.2") });
  const id = await buttonsOn(bot, question("api 1.4.2"));
  await killAtSend(bot, daemon, made, () => approve(bot, id));
  expect(postedBy(bot.sandbox, BOT)).toEqual(
    made ? [question("api 1.4.2"), APPROVED] : [question("api 1.4.2")],
  );
  await expectOutcomeOnce(bot);
});
