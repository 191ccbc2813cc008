/**
 * An inbound webhook with an idempotency header under `bothost run` on a Redis of its own, taken
 * down: a request is answered 503 (a sender and a load balancer retry it), never a 500
 * "internal error" with a stack in the log. Sent as Redis goes down it is 503 (the key could not
 * be claimed, or the bot stopped here); once the bot stopped for its lease lost, 503 at once, the
 * bot not running here. Once Redis is back, the sender's retry runs the handler: the message is
 * sent once, and a repeat is a duplicate. Skipped without redis-server on PATH.
 */
import { describe, expect, it } from "vitest";
import { hasRedisServer, type OwnRedis, startOwnRedis } from "../support/cluster.ts";
import { freePort } from "../support/http-daemon.ts";
import {
  deliverDeploy,
  botSaid as said,
  selfKillingBot,
  useSelfKillingBots,
} from "../support/self-killing-bot.ts";

useSelfKillingBots();

const available = hasRedisServer();
if (!available) console.warn("inbound-webhook-redis-outage: redis-server is not on PATH: skipped");

const moduleText = () => `export default { setup(bot) {
  bot.webhook("deploys", { verify: { type: "none" }, idempotencyHeader: "X-Request-Id" }, async (ctx) => {
    const { service, version } = ctx.request.body;
    await ctx.send({ type: "channel", to: "general", topic: "deploys", content: service + " " + version + " is live" });
  });
} };
`;

describe.skipIf(!available)("an inbound webhook during a Redis outage", () => {
  it("is answered 503, then run once when Redis is back", { timeout: 90_000 }, async () => {
    const redis: OwnRedis = await startOwnRedis();
    try {
      const port = await freePort();
      const { sandbox, start } = await selfKillingBot({
        moduleText,
        stateYaml: () => `state:\n  redis: ${redis.url}\nleases:\n  ttl: 3s`,
        global: `http:\n  listen: 127.0.0.1:${port}`,
      });
      const deliver = async () => {
        const { status, body } = await deliverDeploy(port);
        return { status, body: body as { error?: string } };
      };
      const daemon = await start();
      await redis.down();
      const asDown = await deliver();
      expect(asDown.status).toBe(503);
      expect(asDown.body.error).toMatch(/^bot bot (is not running here now|cannot reach its state store)/);
      await daemon.waitForLog((l) => String(l.msg).startsWith("lease lost"), 30_000);
      expect(await deliver()).toEqual({
        status: 503,
        body: { error: "bot bot is not running here now; try again" },
      });
      expect(said(sandbox)).toEqual([]);
      expect(daemon.logs().filter((l) => l.msg === "http request failed")).toEqual([]);

      await redis.up();
      await expect.poll(async () => (await deliver()).status, { timeout: 30_000, interval: 500 }).toBe(200);
      expect(said(sandbox)).toEqual(["api 1.4.2 is live"]);
      expect(await deliver()).toEqual({ status: 200, body: { duplicate: true } });
      daemon.kill("SIGTERM");
      expect(await daemon.exited).toEqual({ code: 0, signal: null });
    } finally {
      await redis.stop();
    }
  });
});
