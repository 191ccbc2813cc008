/**
 * A progress open across a prompt ("waiting for approval…", then the work once approved) whose
 * dialog ends without an answer, the `PromptError` left uncaught as the guide allows (an ordinary
 * end of the conversation): the progress ends as failed, as after a handler's final failure (the
 * failed note, the `failed` reaction in place of `working`). Before, it kept showing its
 * placeholder, and the asker's message kept the `working` reaction, for good. And one whose
 * answer came past the organization's edit time limit, its message showing an update made before
 * the question: the result is posted in a new message (before, nothing showed it: the closed
 * message was taken to hold its first characters, and `done()` resolved with the ✅ on). Against
 * the sandbox over HTTP, through the testing kit, on the test clock.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../../src/bot/define-bot.ts";
import type { BotContext } from "../../../src/index.ts";
import { defaultOrg } from "../../../src/sandbox/org/default-org.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../../src/testing/run-bot.ts";
import { TestClock } from "../../../src/testing/test-clock.ts";

const MEMBER = "member@sandbox.example";
const FAILED_NOTE = "(failed: the work stopped before it finished)";

/**
 * The deploy bot, asking `question` with `choices` while its progress shows the wait; `build`
 * shows a build's end in its progress first.
 */
const deployBot = (question: string, choices: string[]) =>
  defineBot({
    setup(bot) {
      const deploy = (built: boolean) => async (ctx: BotContext) => {
        const progress = await ctx.progress("Deploy: waiting for approval…", {
          ack: { working: "eyes", done: "check", failed: "warning" },
          finalAfterMs: 3 * 3_600_000,
        });
        if (built) progress.update("Built: waiting for approval…");
        const decision = await ctx.prompt(question, { choices, timeout: "1h" });
        progress.update(`Deploy ${decision.value}d.`);
        await progress.done();
      };
      bot.command("deploy", deploy(false));
      bot.command("build", deploy(true));
    },
  });
const deploys = deployBot("Deploy?", ["approve", "reject"]);

let sandbox: Sandbox | undefined;
let bot: TestBot | undefined;
afterEach(async () => {
  await bot?.stop();
  await sandbox?.stop();
});

const dm = (content: string) => ({ type: "direct" as const, to: [bot!.email], content });

/**
 * The deploy bot running; a member asked it to deploy: its progress and question are out.
 * `realm`: the organization's settings changed; `held`: on a clock that stands still between moves.
 */
async function waitingForApproval(realm: Record<string, unknown> = {}, held = false, command = "deploy") {
  const clock = new TestClock({ held });
  const org = defaultOrg();
  sandbox = await startSandbox({ clock, org: { ...org, realm: { ...org.realm, ...realm } } });
  bot = await runBot(sandbox, { bot: deploys, name: "deploys", clock, config: "handler_timeout: 1h" });
  const asked = bot.post(MEMBER, dm(command));
  const progress = await bot.nextReply({ after: asked });
  expect((await bot.nextReply({ after: progress.id })).content).toMatch(/^Deploy\?/);
  const acks = () =>
    (sandbox!.control.messageView(asked)!.reactions as { emoji_name: string }[]).map((r) => r.emoji_name);
  expect(acks()).toEqual(["eyes"]);
  /** The progress ended as failed: its last edits are paced by the clock, a second at a time. */
  const endedAsFailed = async () => {
    for (let s = 0; s < 60 && acks().join() !== "warning"; s++) {
      await clock.advance(1_000);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(acks()).toEqual(["warning"]);
    expect(sandbox!.control.messages().find((m) => m.id === progress.id)?.content).toBe(FAILED_NOTE);
  };
  return { clock, endedAsFailed, acks, progress };
}

it.each([
  ["times out", undefined],
  ["is cancelled", "cancel"],
])("a progress open across a prompt that %s ends as failed", async (_, word) => {
  const { clock, endedAsFailed } = await waitingForApproval();
  if (word) bot!.post(MEMBER, dm(word));
  else await clock.advance(3_600_000);
  await endedAsFailed();
});

it("a progress open across a prompt whose dialog is stopped for changed code ends as failed", async () => {
  const { endedAsFailed } = await waitingForApproval();
  // The new code asks another question at that step: the waiting dialog no longer matches it.
  await bot!.restart({ bot: deployBot("Which region?", ["eu", "us"]) });
  const answer = bot!.post(MEMBER, dm("approve"));
  expect((await bot!.nextReply({ after: answer })).content).toMatch(
    /updated in the middle of our conversation/,
  );
  await endedAsFailed();
});

it("a progress open across a prompt answered past the edit time limit shows its result in a new message", async () => {
  // Messages can be edited for 10 minutes; the approval comes 50 minutes later.
  const limited = { message_content_edit_limit_seconds: 600 };
  const { clock, acks, progress } = await waitingForApproval(limited, true, "build");
  const shown = () => sandbox!.control.messages().find((m) => m.id === progress.id)?.content;
  // Its edit waits its turn (a second after the post) while the question waits.
  await clock.advance(1_000);
  await expect.poll(shown).toBe("Built: waiting for approval…");
  await clock.advance(50 * 60_000);
  const answer = bot!.post(MEMBER, dm("approve"));
  for (let s = 0; s < 60 && acks().join() !== "check"; s++) {
    await clock.advance(1_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(acks()).toEqual(["check"]);
  const said = sandbox!.control
    .messages()
    .filter((m) => m.sender_id === bot!.userId && (m.id as number) > answer);
  expect(said.map((m) => m.content)).toEqual(["Deploy approved."]);
  // The progress's first message could no longer be edited: it shows what it showed.
  expect(shown()).toBe("Built: waiting for approval…");
});
