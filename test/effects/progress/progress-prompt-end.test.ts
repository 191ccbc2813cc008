/**
 * A progress open across a prompt ("waiting for approval…", then the work once approved) whose
 * dialog ends without an answer, the `PromptError` left uncaught as the guide allows (an ordinary
 * end of the conversation): the progress ends as failed, as after a handler's final failure (the
 * failed note, the `failed` reaction in place of `working`). Before, it kept showing its
 * placeholder, and the asker's message kept the `working` reaction, for good. Against the
 * sandbox over HTTP, through the testing kit, on the test clock.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../../src/bot/define-bot.ts";
import { defaultOrg } from "../../../src/sandbox/org/default-org.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../../src/testing/run-bot.ts";
import { TestClock } from "../../../src/testing/test-clock.ts";

const MEMBER = "member@sandbox.example";
const FAILED_NOTE = "(failed: the work stopped before it finished)";

const deploys = defineBot({
  setup(bot) {
    bot.command("deploy", async (ctx) => {
      const progress = await ctx.progress("Deploy: waiting for approval…", {
        ack: { working: "eyes", done: "check", failed: "warning" },
        finalAfterMs: 3 * 3_600_000,
      });
      const decision = await ctx.prompt("Deploy?", { choices: ["approve", "reject"], timeout: "1h" });
      progress.update(`Deploy ${decision.value}d.`);
      await progress.done();
    });
  },
});

let sandbox: Sandbox | undefined;
let bot: TestBot | undefined;
afterEach(async () => {
  await bot?.stop();
  await sandbox?.stop();
});

it.each([
  ["times out", undefined],
  ["is cancelled", "cancel"],
])("a progress open across a prompt that %s ends as failed", async (_, word) => {
  const clock = new TestClock();
  sandbox = await startSandbox({ clock, org: defaultOrg() });
  bot = await runBot(sandbox, { bot: deploys, name: "deploys", clock, config: "handler_timeout: 1h" });
  const dm = (content: string) => ({ type: "direct" as const, to: [bot!.email], content });
  const asked = bot.post(MEMBER, dm("deploy"));
  const progress = await bot.nextReply({ after: asked });
  expect((await bot.nextReply({ after: progress.id })).content).toMatch(/^Deploy\?/);
  const acks = () =>
    (sandbox!.control.messageView(asked)!.reactions as { emoji_name: string }[]).map((r) => r.emoji_name);
  expect(acks()).toEqual(["eyes"]);

  if (word) bot.post(MEMBER, dm(word));
  else await clock.advance(3_600_000);
  // Its last edits are paced by the clock, a second at a time.
  for (let s = 0; s < 60 && acks().join() !== "warning"; s++) {
    await clock.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(acks()).toEqual(["warning"]);
  expect(sandbox.control.messages().find((m) => m.id === progress.id)?.content).toBe(FAILED_NOTE);
});
