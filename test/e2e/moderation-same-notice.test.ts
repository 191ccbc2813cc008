/**
 * The shipped moderation bot under `bothost run`: two messages of one sender in one topic break
 * the same rule, so their `notify_sender` messages read the same. The second one's send fails
 * with nothing stored (a proxy's 503): its handler runs again and looks for its message among the
 * bot's, where the first message's notice, posted after the second message came, reads the same.
 * It is not taken for the second's: the sender is told twice, once per reported message.
 */
import { expect, it } from "vitest";
import { MEMBER } from "../support/e2e-daemon.ts";
import { MODERATION_BOT as BOT, MODERATION_ORG, shippedBot, useShippedBots } from "../support/shipped-bot.ts";

const NOTICE =
  'Hi Mel Member, your message in #general > deals was sent to the moderators: blocked word: uses "scam".';

useShippedBots();

it("a notice that reads as an earlier message's notice, its send failed, is sent again: one per report", {
  timeout: 60_000,
}, async () => {
  const bot = await shippedBot({
    org: MODERATION_ORG,
    name: "moderation",
    module: "moderation.ts",
    email: BOT,
    more: ["retries: { backoff: 100ms }"],
    settings: [
      'notify_sender: "Hi {{name}}, your message in {{where}} was sent to the moderators: {{details}}."',
      "rules:",
      "  keywords: { words: [scam] }",
    ],
  });
  const { sandbox } = bot;
  // Only the bot posts over HTTP: once its first notice is answered, its next send fails unstored.
  let sends = 0;
  bot.onResponse = (r) => {
    if (r.method === "POST" && r.route === "/messages" && r.status === 200 && ++sends === 1)
      sandbox.control.failNext(1, { status: 503, nonJson: true, paths: [/^\/messages$/] });
  };
  const daemon = await bot.start();
  // Both come before the bot handles the first: its notice is newer than the second message.
  const post = (content: string) =>
    sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "deals", content }).id;
  post("what a scam this is");
  const second = post("another scam right here");
  await daemon.waitForLog((l) => l.msg === "handler failed; running it again after a pause", 20_000);
  await daemon.waitForLog(
    (l) => l.msg === `message ${second} was reported by an earlier run of its handler: not again`,
    20_000,
  );

  const botId = sandbox.control.users().find((u) => u.email === BOT)!.user_id;
  const told = () =>
    sandbox.control
      .messages()
      .filter((m) => m.sender_id === botId && m.type === "private")
      .map((m) => String(m.content));
  await expect.poll(told, { timeout: 10_000 }).toEqual([NOTICE, NOTICE]);
  expect(
    sandbox.control.messages().filter((m) => String(m.content).includes("reported a message sent by")),
  ).toHaveLength(2);
  daemon.kill("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
});
