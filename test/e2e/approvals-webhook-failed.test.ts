/**
 * The approvals bot (bots/approvals.ts) under `bothost run` with a deploy webhook that answers 500:
 * once every attempt failed, the topic says that the webhook did not succeed and that an operator can call
 * the webhook again; `bothost failed retry` (the receiver fixed) calls it once more and the topic
 * then shows the approval.
 */
import { createServer } from "node:http";
import { expect, it } from "vitest";
import * as A from "../support/approvals-daemon.ts";
import { runCli } from "../support/cli.ts";
import { closeAfterTest } from "../support/e2e-daemon.ts";
import { postedBy, useShippedBots } from "../support/shipped-bot.ts";

useShippedBots();

it("a deploy webhook that fails on every attempt is told in the topic; `bothost failed retry` calls it again", {
  timeout: 60_000,
}, async () => {
  let status = 500;
  const calls: number[] = [];
  const hook = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      calls.push(status);
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
  closeAfterTest(() => new Promise((resolve) => hook.close(resolve)));
  const url = `http://127.0.0.1:${(hook.address() as { port: number }).port}/deploy`;
  const bot = await A.setUp(url, ["retries: { attempts: 2, backoff: 50ms }"]);
  const daemon = await bot.start();
  bot.sandbox.control.sendAs(A.REQ, { ...A.topic, content: A.ask("api 1.4.2") });
  await A.approve(bot, await A.buttonsOn(bot, A.question("api 1.4.2")));
  const said = () => postedBy(bot.sandbox, A.BOT);
  await expect.poll(said, { timeout: 15_000 }).toEqual([A.question("api 1.4.2"), A.HOOK_FAILED]);
  expect(calls).toEqual([500, 500]);

  status = 204;
  const retry = await runCli(["failed", "retry", "--all", "-c", bot.config]);
  expect(retry.code).toBe(0);
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe(A.APPROVED);
  expect(calls).toEqual([500, 500, 204]);
  expect(said()).toEqual([A.question("api 1.4.2"), A.APPROVED]);
  daemon.kill("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
});
