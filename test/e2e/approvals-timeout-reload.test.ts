/**
 * The approvals bot (bots/approvals.ts) under `bothost run`: a reload that changes `timeout` while
 * a request waits leaves that request's deadline as it was (kept with the dialog), and the
 * requester, told it expired, reads the wait it had, not the new setting's.
 */
import { readFile, writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import * as A from "../support/approvals-daemon.ts";
import { runCli } from "../support/cli.ts";
import { RELEASE_ORG } from "../support/release-org.ts";
import { postedBy, shippedBot, useShippedBots } from "../support/shipped-bot.ts";

useShippedBots();

it("a request asked with a 6 s timeout, the setting reloaded to 1d: it expires saying 6s", {
  timeout: 60_000,
}, async () => {
  const bot = await shippedBot({
    org: RELEASE_ORG,
    name: "approvals",
    module: "approvals.ts",
    email: A.BOT,
    settings: ["group: release-managers", "timeout: 6s"],
  });
  const daemon = await bot.start();
  bot.sandbox.control.sendAs(A.REQ, { ...A.topic, content: A.ask("api 1.4.2") });
  await A.buttonsOn(bot, A.question("api 1.4.2"));
  const text = await readFile(bot.config, "utf8");
  await writeFile(bot.config, text.replace("timeout: 6s", "timeout: 1d"));
  const reload = await runCli(["reload", "-c", bot.config]);
  expect([reload.code, reload.stdout]).toEqual([0, "Restarted: approvals\n"]);
  // Reloaded before the deadline: the new version runs it.
  expect(postedBy(bot.sandbox, A.BOT)).toEqual([A.question("api 1.4.2")]);
  await expect
    .poll(() => postedBy(bot.sandbox, A.BOT), { timeout: 20_000 })
    .toEqual([A.question("api 1.4.2"), "Deploy of api 1.4.2 expired: nobody decided in 6s."]);
  daemon.kill("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
});
