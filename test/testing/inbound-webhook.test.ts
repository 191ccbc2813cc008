/**
 * A bot's inbound webhooks tested with the kit: `runBot({ webhooks: true })` serves them on a
 * listener of the bot's own, and `bot.webhook(name, request)` sends a request as a sender would.
 * The bot is the guide's deploy announcer: a bearer token, a JSON body, a post in a channel.
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";
import { z } from "zod";

const deploys = defineBot({
  settings: z.object({ deployToken: z.string() }),
  setup(bot, settings) {
    bot.webhook("deploys", { verify: { type: "bearer", token: settings.deployToken } }, async (ctx) => {
      const { service, version } = ctx.request.body as { service: string; version: string };
      await ctx.send({
        type: "channel",
        to: "general",
        topic: "deploys",
        content: `${service} ${version} is out.`,
      });
    });
  },
});

const TOKEN = "deploy-token-0123456789";
const test = createBotTest();

test("a verified request posts in the channel; a wrong token is refused", async ({ runBot }) => {
  const bot = await runBot({ bot: deploys, settings: { deployToken: TOKEN }, webhooks: true });
  const refused = await bot.webhook("deploys", {
    headers: { authorization: "Bearer wrong-token-0123456789" },
    body: { service: "api", version: "1.2" },
  });
  expect(refused.status).toBe(401);
  const answered = await bot.webhook("deploys", {
    headers: { authorization: `Bearer ${TOKEN}` },
    body: { service: "api", version: "1.3" },
  });
  expect(answered.status).toBe(200);
  const posted = await bot.nextReply();
  expect([posted.type, posted.display_recipient, posted.subject, posted.content]).toEqual([
    "stream",
    "general",
    "deploys",
    "api 1.3 is out.",
  ]);
  expect(bot.replies()).toHaveLength(1);
});

test("without webhooks: true, or by a name it does not declare, the test is told", async ({ runBot }) => {
  const bot = await runBot({ bot: deploys, settings: { deployToken: TOKEN } });
  await expect(bot.webhook("deploys")).rejects.toThrow(
    "webhook: bot serves no webhooks here: run it with runBot({ …, webhooks: true })",
  );
  const served = await runBot({
    bot: deploys,
    name: "served",
    settings: { deployToken: TOKEN },
    webhooks: true,
  });
  expect((await served.webhook("deploy")).status).toBe(404);
  await served.stop();
  await expect(served.webhook("deploys")).rejects.toThrow("webhook: served is stopped: start() it first");
});
