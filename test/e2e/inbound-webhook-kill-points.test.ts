/**
 * An inbound webhook with an idempotency header under `bothost run`, killed (`BOTHOST_FAILPOINTS`)
 * at the two moments between its send and its handled mark: `message-sent` (the server stored the
 * message and answered; the send's record not yet written) and `webhook-ran` (the handler returned,
 * its `ctx.state` writes applied; the request's handled mark not yet written). The sender's retries
 * get 503 until the dead run's claim expired, then 200: the message is in the channel once (a lost
 * record is found by reading the conversation back), the counter went up once, and a repeat is a
 * duplicate. On the file store, and at `message-sent` on Redis (else skipped with one line).
 */
import { describe, expect, it } from "vitest";
import { type Backend, casesOn, crashBackends } from "../support/crash-backends.ts";
import { freePort } from "../support/http-daemon.ts";
import {
  deliverDeploy,
  retriedUntilOk,
  botSaid as said,
  selfKillingBot,
  useSelfKillingBots,
} from "../support/self-killing-bot.ts";

useSelfKillingBots();

const moduleText = () => `export default { setup(bot) {
  bot.webhook("deploys", { verify: { type: "none" }, idempotencyHeader: "X-Request-Id" }, async (ctx) => {
    const { service, version } = ctx.request.body;
    await ctx.send({ type: "channel", to: "general", topic: "deploys", content: service + " " + version + " is live" });
    await ctx.state.update("deploys", (n) => (n ?? 0) + 1);
  });
} };
`;

const backends = await crashBackends("inbound-webhook-kill-points");

describe.each(backends)("on the %s", (name, backendFor) => {
  // On Redis one point (each daemon spawned costs a second of CPU): the two differ in the pipeline alone.
  it.each(casesOn(name, ["message-sent", "webhook-ran"], (p) => p === "message-sent"))(
    "killed at %s: run again once its claim expired, made once",
    {
      timeout: 60_000,
    },
    async (point) => {
      const port = await freePort();
      let backend: Backend | undefined;
      const { sandbox, start } = await selfKillingBot({
        moduleText,
        stateYaml: (dir) => {
          backend = backendFor(dir);
          return backend.yaml;
        },
        global: `http:\n  listen: 127.0.0.1:${port}`,
        botLines: "handler_timeout: 1s",
      });
      const deliver = async () => {
        const { status, body } = await deliverDeploy(port);
        return { status, body };
      };
      const first = await start({ BOTHOST_FAILPOINTS: point });
      await expect(deliver()).rejects.toThrow();
      expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
      expect(said(sandbox)).toEqual(["api 1.4.2 is live"]);

      const again = await start();
      const answers = await retriedUntilOk(deliver);
      for (const answer of answers.slice(0, -1)) expect(answer.status).toBe(503);
      expect(answers.at(-1)!.body).toEqual({ ok: true });
      expect(said(sandbox)).toEqual(["api 1.4.2 is live"]);
      expect(await deliver()).toEqual({ status: 200, body: { duplicate: true } });
      again.kill("SIGTERM");
      expect(await again.exited).toEqual({ code: 0, signal: null });

      const store = await backend!.open();
      try {
        expect(await store.namespace("bot").namespace("kv").get("deploys")).toBe(1);
      } finally {
        await store.close();
      }
    },
  );
});
