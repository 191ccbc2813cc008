/**
 * A server upgrade restarts the server and keeps every queue: the new feature level reaches a bot
 * only in the `restart` event, which the server sends to queues that take that type alone. A bot
 * that handles messages only must still learn it, or a call the upgrade made possible keeps
 * failing as unsupported until its queue is renewed. Against the sandbox over HTTP.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { defaultOrg } from "../../src/sandbox/org/default-org.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { featureLevels } from "../../src/wire/feature-levels.ts";

const MEMBER = "member@sandbox.example";
const SNIPPETS = featureLevels.savedSnippets;

const lister = defineBot({
  setup(bot) {
    bot.command("snippets", async (ctx) => {
      const said = await ctx.api.savedSnippets.list().then(
        () => "listed",
        (err: { code?: string }) => err.code ?? "failed",
      );
      await ctx.reply(said);
    });
  },
});

let sandbox: Sandbox | undefined;
let bot: TestBot | undefined;
afterEach(async () => {
  await bot?.stop();
  await sandbox?.stop();
});

it("a message-only bot learns the feature level of an upgrade from the restart event, on the same queue", async () => {
  const org = defaultOrg();
  sandbox = await startSandbox({ org: { ...org, realm: { ...org.realm, feature_level: SNIPPETS - 1 } } });
  bot = await runBot(sandbox, { bot: lister, name: "lister" });
  const ask = async () =>
    (await bot!.ask(MEMBER, { type: "direct", to: [bot!.email], content: "snippets" })).content;
  expect(await ask()).toBe("UNSUPPORTED_FEATURE");
  const registered = () => sandbox!.control.requests.filter((r) => r.path === "/register").length;
  const before = registered();
  sandbox.control.restartQueues({ featureLevel: SNIPPETS });
  expect(await ask()).toBe("listed");
  expect(registered()).toBe(before);
  expect(
    bot
      .logs()
      .filter((l) => l.msg === "server restarted")
      .map((l) => l.featureLevel),
  ).toEqual([SNIPPETS]);
});
