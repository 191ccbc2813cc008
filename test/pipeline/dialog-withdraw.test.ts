/**
 * A question asked of others (`from`) withdrawn by the person who asked it, against the sandbox
 * over HTTP in a real daemon: the asker, excepted from the group or outside it, says the cancel
 * word and the prompt rejects with `PROMPT_CANCELLED`, its reply said once, the dialog over and
 * the topic free for a new question; the asker's other messages are ordinary; an answerer's
 * cancel word, as all their talk that is no choice, is an ordinary message; a withdrawal sent
 * while the bot is down is taken at its start.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { PromptError } from "../../src/index.ts";
import { CANCELLED_REPLY } from "../../src/pipeline/dialogs/prompt.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SendAsInput } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { BOT, OWNER, RELEASE_ORG, REQ, RITA, RON } from "../support/release-org.ts";

const QUESTION = "Deploy?\n1. approve\n2. reject";
const WITHDRAWN = "Withdrawn by its requester.";

/** Says how a prompt ended when it rejects. */
async function outcome(ctx: { reply(text: string): Promise<unknown> }, ask: () => Promise<string>) {
  try {
    await ctx.reply(await ask());
  } catch (err) {
    if (!(err instanceof PromptError)) throw err;
    await ctx.reply(`ended: ${err.code}`);
  }
}

const deploys = defineBot({
  setup(bot) {
    bot.track("groups");
    bot.command("deploy", (ctx) =>
      outcome(ctx, async () => {
        const decision = await ctx.prompt("Deploy?", {
          from: { group: "release-managers" },
          except: [ctx.sender!.id],
          choices: ["approve", "reject"],
          cancel: { word: "withdraw", reply: WITHDRAWN },
        });
        return `${decision.value} by ${decision.by.name}`;
      }),
    );
    bot.command("ship", (ctx) =>
      outcome(ctx, async () => {
        // No `except`: the requester, a release manager, may answer it too.
        const decision = await ctx.prompt("Ship?", {
          from: { group: "release-managers" },
          choices: ["approve", "reject"],
        });
        return `${decision.value} by ${decision.by.name}`;
      }),
    );
    bot.command("review", (ctx) =>
      outcome(ctx, async () => {
        // Asked of the owner alone: the asker may not answer, and the cancel word is the default.
        const owner = (await ctx.users.get(OWNER))!.user_id;
        return `review: ${(await ctx.prompt("Looks good?", { from: owner })).text}`;
      }),
    );
  },
});

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  const clock = new TestClock();
  sandbox = await startSandbox({ clock, org: RELEASE_ORG });
  bot = await runBot(sandbox, { bot: deploys, name: "approvals", email: BOT, clock });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const say = (content: string): SendAsInput => ({ type: "stream", to: "ops", topic: "deploys", content });

/** The bot's two messages after message `after`: the cancel reply, then how the prompt ended. */
async function twoAfter(after: number): Promise<string[]> {
  const first = await bot.nextReply({ after });
  return [first.content, (await bot.nextReply({ after: first.id })).content];
}

it("the requester, excepted from the group, withdraws with the cancel word: said once, the dialog over, the topic free", async () => {
  expect((await bot.ask(REQ, say("@**Approvals** deploy"))).content).toBe(QUESTION);
  expect(bot.dialogs()).toHaveLength(1);
  const withdraw = bot.post(REQ, say("Withdraw"));
  expect(await twoAfter(withdraw)).toEqual([WITHDRAWN, "ended: PROMPT_CANCELLED"]);
  await expect.poll(() => bot.dialogs()).toEqual([]);
  // A new request in the topic is asked, not refused as pending.
  expect((await bot.ask(REQ, say("@**Approvals** deploy"))).content).toBe(QUESTION);
  expect((await bot.ask(RITA, say("approve"))).content).toBe("approve by Rita Release");
  expect(bot.replies().filter((m) => m.content === WITHDRAWN)).toHaveLength(1);
});

it("the asker outside those who answer withdraws with the default cancel word", async () => {
  expect((await bot.ask(REQ, say("@**Approvals** review"))).content).toBe("Looks good?");
  const withdraw = bot.post(REQ, say("cancel"));
  expect(await twoAfter(withdraw)).toEqual([CANCELLED_REPLY, "ended: PROMPT_CANCELLED"]);
  await expect.poll(() => bot.dialogs()).toEqual([]);
});

it("the requester who may answer too withdraws with the cancel word; a choice of theirs answers", async () => {
  expect((await bot.ask(REQ, say("@**Approvals** ship"))).content).toBe("Ship?\n1. approve\n2. reject");
  const cancel = bot.post(REQ, say("cancel"));
  expect(await twoAfter(cancel)).toEqual([CANCELLED_REPLY, "ended: PROMPT_CANCELLED"]);
  await expect.poll(() => bot.dialogs()).toEqual([]);
  await bot.ask(REQ, say("@**Approvals** ship"));
  expect((await bot.ask(REQ, say("approve"))).content).toBe("approve by Rae Requester");
});

it("the requester's other messages are no answer: the question still waits for the group", async () => {
  await bot.ask(REQ, say("@**Approvals** deploy"));
  for (const aside of ["approve", "1", "withdraw it please"]) await bot.handled(bot.post(REQ, say(aside)));
  expect(bot.dialogs()).toHaveLength(1);
  expect((await bot.ask(RON, say("reject"))).content).toBe("reject by Ron Release");
  expect(bot.replies().map((m) => m.content)).toEqual([QUESTION, "reject by Ron Release"]);
});

it("an approver's cancel word, as all talk there that is no choice, is an ordinary message: the question waits, a choice decides it", async () => {
  await bot.ask(REQ, say("@**Approvals** deploy"));
  for (const [who, talk] of [
    [RITA, "withdraw"],
    [RON, "Withdraw"],
    [RITA, "let me check the changelog first"],
    [RON, "approved?"],
  ] as const)
    await bot.handled(bot.post(who, say(talk)));
  expect(bot.replies().map((m) => m.content)).toEqual([QUESTION]);
  expect(bot.dialogs()).toHaveLength(1);
  expect((await bot.ask(RON, say("2"))).content).toBe("reject by Ron Release");
  expect(bot.replies().filter((m) => m.content === WITHDRAWN)).toEqual([]);
});

it("a withdrawal said while the bot is down is taken at its start, once", async () => {
  await bot.ask(REQ, say("@**Approvals** deploy"));
  await bot.stop();
  const withdraw = bot.post(REQ, say("withdraw"));
  await bot.start();
  expect(await twoAfter(withdraw)).toEqual([WITHDRAWN, "ended: PROMPT_CANCELLED"]);
  await expect.poll(() => bot.dialogs()).toEqual([]);
  await bot.restart({ crash: true });
  expect((await bot.ask(REQ, say("@**Approvals** deploy"))).content).toBe(QUESTION);
  expect(bot.replies().map((m) => m.content)).toEqual([
    QUESTION,
    WITHDRAWN,
    "ended: PROMPT_CANCELLED",
    QUESTION,
  ]);
});
