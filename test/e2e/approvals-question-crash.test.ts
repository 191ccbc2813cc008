/**
 * The approvals bot (bots/approvals.ts) under `bothost run`, killed (kill -9) during a request's
 * question's send, held by the sandbox (never made) or made with its answer unread, then started
 * again on the same state: the topic reads the question once, with its buttons; the approver's
 * press on it decides, made after the restart or while no daemon ran, the outcome posted once, and
 * the next request there is asked. A press made while no daemon ran under another name of its
 * button's emoji (✗ is `cross_mark` and `wrong`) decides too.
 */
import { expect, it } from "vitest";
import * as A from "../support/approvals-daemon.ts";
import { postedBy, useShippedBots } from "../support/shipped-bot.ts";

useShippedBots();

it.each([
  ["held, never made", false],
  ["made, its answer unread", true],
])(
  "killed during the question's send (%s): the approver presses the button of the one question",
  {
    timeout: 30_000,
  },
  async (_name, made) => {
    const bot = await A.setUp();
    const daemon = await bot.start();
    await A.killAtSend(bot, daemon, made, () => {
      bot.sandbox.control.sendAs(A.REQ, { ...A.topic, content: A.ask("api 1.4.2") });
    });
    expect(postedBy(bot.sandbox, A.BOT)).toEqual(made ? [A.question("api 1.4.2")] : []);
    const again = await bot.start();
    await A.approve(bot, await A.buttonsOn(bot, A.question("api 1.4.2")));
    await A.expectOutcomeOnce(bot, again);
  },
);

// The question found made at the restart (its effect's record left pending, or cut before the
// log): the press made while no daemon ran is taken from the question's reactions once the
// question waits again (the reactions read at the new queue were read before it did).
it.each([
  ["its answer unread", undefined],
  ["right after its send (`question-sent`)", "question-sent"],
])(
  "killed during the question's send (%s), the button pressed while down: the press decides",
  {
    timeout: 30_000,
  },
  async (_name, point) => {
    const bot = await A.setUp();
    const daemon = await bot.start(point ? { BOTHOST_FAILPOINTS: point } : {});
    const request = () => bot.sandbox.control.sendAs(A.REQ, { ...A.topic, content: A.ask("api 1.4.2") });
    if (point) request();
    else await A.killAtSend(bot, daemon, true, request);
    expect(await daemon.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(postedBy(bot.sandbox, A.BOT)).toEqual([A.question("api 1.4.2")]);
    await A.approve(bot, Number(bot.sandbox.control.messages().at(-1)!.id));
    await A.expectOutcomeOnce(bot);
  },
);

// Pressed before the bot put its buttons, ✗ as `wrong`: the server keeps that name, and the bot's
// `cross_mark` put at the restart becomes a vote under it. The press is matched by its emoji's code.
it("killed right after the question's send, ✗ pressed while down as `wrong`: the press rejects", {
  timeout: 30_000,
}, async () => {
  const bot = await A.setUp();
  const daemon = await bot.start({ BOTHOST_FAILPOINTS: "question-sent" });
  bot.sandbox.control.sendAs(A.REQ, { ...A.topic, content: A.ask("api 1.4.2") });
  expect(await daemon.exited).toEqual({ code: null, signal: "SIGKILL" });
  const id = Number(bot.sandbox.control.messages().at(-1)!.id);
  await A.approve(bot, id, "wrong");
  const again = await bot.start();
  const rejected = "Deploy of api 1.4.2 rejected by Rita Release.";
  await bot.sandbox.control.waitFor(() => postedBy(bot.sandbox, A.BOT).includes(rejected), {
    timeoutMs: 15_000,
  });
  const names = (bot.sandbox.control.messageView(id)?.reactions ?? []) as { emoji_name: string }[];
  expect(names.map((r) => r.emoji_name).sort()).toEqual(["check", "wrong", "wrong"]);
  expect(postedBy(bot.sandbox, A.BOT)).toEqual([A.question("api 1.4.2"), rejected]);
  again.kill("SIGTERM");
  expect(await again.exited).toEqual({ code: 0, signal: null });
});
