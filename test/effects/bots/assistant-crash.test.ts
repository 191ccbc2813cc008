/**
 * The assistant bot (bots/assistant.ts) killed mid-answer (a crash while the endpoint streams),
 * started again on its state: the message is handled again, the endpoint is called again, and
 * the answer is shown whole in the one message the first run posted; or, past 30 s after that
 * post, posted anew below it. It imports "bothost", which resolves to dist/: run `npm run build`
 * first (`npm test` does).
 */
import { type BotFixtures, createBotTest, expect } from "bothost/testing/vitest";
import { afterEach, beforeEach } from "vitest";
import assistant from "../../../bots/assistant.ts";
import { type ChatEndpoint, startChatEndpoint } from "./chat-endpoint.ts";

const MEMBER = "member@sandbox.example";

const test = createBotTest({});
let endpoint: ChatEndpoint;
beforeEach(async () => {
  endpoint = await startChatEndpoint();
});
afterEach(() => endpoint.stop());

/** The assistant asked in a direct message; resolves once the first half of its answer is shown, the endpoint stalled. */
async function halfShown(runBot: BotFixtures["runBot"]) {
  const settings = { base_url: endpoint.url, model: "imitation-1" };
  const bot = await runBot({ bot: assistant, name: "assistant", settings, config: "handler_timeout: 5m" });
  endpoint.queue(
    { kind: "stall", chunks: ["The first half of a long answer, "] },
    { kind: "stream", chunks: ["A new ", "answer."] },
  );
  const asked = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "tell me" });
  const shown = () => bot.replies().map((m) => m.content);
  await expect.poll(shown, { timeout: 10_000 }).toEqual(["The first half of a long answer,"]);
  return { bot, asked };
}

test("killed mid-answer: the endpoint is asked again, the answer shown whole in one message", async ({
  runBot,
  sandbox,
}) => {
  const { bot, asked } = await halfShown(runBot);
  await bot.restart({ crash: true });
  const view = await bot.progress(asked, { timeoutMs: 10_000 });
  expect(view.messages).toHaveLength(1);
  expect(view.text).toBe("A new answer.");
  expect(endpoint.requests).toHaveLength(2);
  expect(sandbox.control.messageView(asked)!.reactions.map((r) => r.emoji_name)).toEqual(["check"]);
});

const onClock = createBotTest({ clock: { start: "2026-11-30T08:00:00Z" } });

onClock(
  "killed mid-answer, back a minute later: the answer is posted anew below",
  async ({ runBot, clock }) => {
    const { bot, asked } = await halfShown(runBot);
    await bot.stop({ crash: true });
    await clock.advance(60_000);
    await bot.start();
    const view = await bot.progress(asked, { timeoutMs: 10_000 });
    expect(view.messages.map((m) => m.content)).toEqual(["(finished: see below)", "A new answer."]);
    expect(endpoint.requests).toHaveLength(2);
  },
);
