/**
 * A bot run by the testing kit whose config lines name a `webhooks.<name>` its module does not
 * declare: the error says where in those lines, with the declared name it is closest to, as
 * `bothost check` says it in a config file. runBot on the sandbox, in this process.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { runBot } from "../../src/testing/run-bot.ts";

const hooked = defineBot({
  setup: (b) => void b.webhook("github", { verify: { type: "none" } }, () => {}),
});

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.stop();
});

it("is located in the test's config lines, with a did-you-mean", async () => {
  sandbox = await startSandbox();
  const config = "retries: { attempts: 1 }\nwebhooks:\n  githb:\n    idempotency_window: 7d";
  const err = await runBot(sandbox, { bot: hooked, name: "hooks", config, webhooks: true }).catch(
    (e: Error) => e,
  );
  expect(err).toMatchObject({
    code: "BOT_SETUP_INVALID",
    message:
      'the bot did not start: config:3:3: bots.hooks.webhooks.githb in the config names no webhook of the bot\'s module (it declares github). Did you mean "github"? Use the name given to bot.webhook().',
  });
});
