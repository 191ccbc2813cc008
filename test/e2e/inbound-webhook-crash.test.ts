/**
 * An inbound webhook with an idempotency header under `bothost run`, the process killed in the
 * middle of its handler (the handler kills it, the first time, right after its send). The sender's
 * retries are answered 503 with Retry-After while the dead run's claim lasts (never the
 * `{"duplicate":true}` that would tell the sender it was handled), then run the handler again:
 * its send returns what the first run made, so the channel reads the message once, and a
 * repeat after that is a duplicate. On the file store and on Redis (else skipped with one line).
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { crashBackends } from "../support/crash-backends.ts";
import { freePort } from "../support/http-daemon.ts";
import {
  deliverDeploy,
  retriedUntilOk,
  botSaid as said,
  selfKillingBot,
  useSelfKillingBots,
} from "../support/self-killing-bot.ts";

useSelfKillingBots();

/** The guide's deploys webhook; the first time, the process dies right after the send. */
const moduleText = (flag: string) => `import { existsSync, writeFileSync } from "node:fs";
export default { setup(bot) {
  bot.webhook("deploys", { verify: { type: "none" }, idempotencyHeader: "X-Request-Id" }, async (ctx) => {
    const { service, version } = ctx.request.body;
    await ctx.send({ type: "channel", to: "general", topic: "deploys", content: service + " " + version + " is live" });
    if (!existsSync(${JSON.stringify(flag)})) {
      writeFileSync(${JSON.stringify(flag)}, "");
      process.kill(process.pid, "SIGKILL");
    }
  });
} };
`;

const backends = await crashBackends("inbound-webhook-crash");

describe.each(backends)("on the %s", (name, backendFor) => {
  it("killed mid-handler: retries wait for the claim, then run it again; the message is sent once", {
    timeout: 60_000,
  }, async () => {
    const port = await freePort();
    const { sandbox, flag, start } = await selfKillingBot({
      moduleText,
      stateYaml: (dir) => backendFor(dir).yaml,
      global: `http:\n  listen: 127.0.0.1:${port}`,
      botLines: "handler_timeout: 1s",
    });
    const deliver = () => deliverDeploy(port);
    const first = await start();
    await expect(deliver()).rejects.toThrow();
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(said(sandbox)).toEqual(["api 1.4.2 is live"]);

    const again = await start();
    // The sender retries until it is answered 200: each answer before is a 503 with Retry-After.
    const answers = await retriedUntilOk(deliver);
    // Before it: the other instance's lease (Redis runs the daemon as a cluster), then the claim
    // of the run that died (durable at once on Redis; on the file store it may not have been).
    const waited = answers.slice(0, -1);
    for (const answer of waited) expect(answer.status).toBe(503);
    const claimed = waited.filter((a) => String(a.body.error).includes("being handled"));
    for (const answer of claimed) expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    if (name === "Redis") expect(claimed.length).toBeGreaterThan(0);
    expect(answers.at(-1)!.body).toEqual({ ok: true });
    expect(said(sandbox)).toEqual(["api 1.4.2 is live"]);
    expect(await deliver()).toMatchObject({ status: 200, body: { duplicate: true } });
    expect(existsSync(flag)).toBe(true);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });
});
