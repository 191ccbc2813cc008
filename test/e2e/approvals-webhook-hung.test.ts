/**
 * The approvals bot (bots/approvals.ts) under `bothost run` with a deploy webhook that takes the
 * request and never answers: each attempt's call is cut at the bot's `handler_timeout` (the bot
 * gives the call its `ctx.signal`), so the requester and the approver read in the topic that the
 * webhook did not succeed, and the request is kept as a dead letter, after the attempts' timeouts
 * rather than after the HTTP client's own wait for headers (5 minutes an attempt).
 */
import { createServer, type IncomingMessage } from "node:http";
import { expect, it } from "vitest";
import * as A from "../support/approvals-daemon.ts";
import { runCli } from "../support/cli.ts";
import { closeAfterTest } from "../support/e2e-daemon.ts";
import { postedBy, useShippedBots } from "../support/shipped-bot.ts";

useShippedBots();

it("a deploy webhook that never answers is cut at handler_timeout: the topic says so, the request is kept", {
  timeout: 60_000,
}, async () => {
  const held: IncomingMessage[] = [];
  let cut = 0;
  const hook = createServer((req) => {
    held.push(req);
    req.resume();
    // Never answered: only the client closing the connection ends the request.
    req.socket.on("close", () => cut++);
  });
  await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
  closeAfterTest(() => {
    hook.closeAllConnections();
    return new Promise((resolve) => hook.close(resolve));
  });
  const url = `http://127.0.0.1:${(hook.address() as { port: number }).port}/deploy`;
  const bot = await A.setUp(url, ["handler_timeout: 2s", "retries: { attempts: 2, backoff: 50ms }"]);
  const daemon = await bot.start();
  bot.sandbox.control.sendAs(A.REQ, { ...A.topic, content: A.ask("api 1.4.2") });
  await A.approve(bot, await A.buttonsOn(bot, A.question("api 1.4.2")));
  await expect
    .poll(() => postedBy(bot.sandbox, A.BOT), { timeout: 30_000 })
    .toEqual([A.question("api 1.4.2"), A.HOOK_FAILED]);
  expect(held).toHaveLength(2);
  expect(cut).toBe(2);
  const list = await runCli(["failed", "list", "--json", "-c", bot.config]);
  expect(list.code).toBe(0);
  expect(JSON.parse(list.stdout)).toMatchObject([{ id: "approvals/1", attempts: 2 }]);
  daemon.kill("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
});
