/**
 * A bot's inbound webhooks tested with the kit: `runBot({ webhooks: true })` serves them on a
 * listener of the bot's own, and `bot.webhook(name, request)` sends a request as a sender would.
 * The bot is the guide's deploy announcer: a bearer token, a JSON body, a post in a channel.
 */
import { createHmac } from "node:crypto";
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

test("an outgoing-webhook bot's listener serves its inbound webhooks too", async ({ runBot }) => {
  const bot = await runBot({ bot: deploys, settings: { deployToken: TOKEN }, outgoingWebhook: true });
  const res = await bot.webhook("deploys", {
    headers: { authorization: `Bearer ${TOKEN}` },
    body: { service: "api", version: "1.4" },
  });
  expect(res.status).toBe(200);
});

test("a signed JSON string body reaches the handler parsed, as GitHub sends it", async ({ runBot }) => {
  const SECRET = "github-secret-for-tests";
  const github = defineBot({
    setup(bot) {
      bot.webhook("github", { verify: { type: "github", secret: SECRET } }, (ctx) => ({
        action: (ctx.request.body as { action?: string } | undefined)?.action ?? null,
        type: ctx.request.headers["content-type"],
      }));
    },
  });
  const bot = await runBot({ bot: github, name: "github", webhooks: true });
  // The test signs the exact bytes it sends: the body as a string.
  const body = JSON.stringify({ action: "opened" });
  const signature = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
  const sent = await bot.webhook("github", { body, headers: { "x-hub-signature-256": signature } });
  expect(sent).toMatchObject({ status: 200, body: { action: "opened", type: "application/json" } });
  // A content type the test gives is the one sent.
  const text = await bot.webhook("github", {
    body,
    headers: { "x-hub-signature-256": signature, "Content-Type": "text/plain" },
  });
  expect(text).toMatchObject({ status: 200, body: { action: null, type: "text/plain" } });
  // A string that is not JSON is sent as text, as before.
  const plain = "action=opened";
  const form = await bot.webhook("github", {
    body: plain,
    headers: { "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(plain).digest("hex")}` },
  });
  expect(form).toMatchObject({ status: 200, body: { action: null, type: "text/plain;charset=UTF-8" } });
});
