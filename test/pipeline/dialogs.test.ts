/**
 * Durable dialogs (`ctx.prompt`), against the sandbox over HTTP in a real daemon, the testing
 * kit's clock moved instead of waited for: each answer lands under its question through restarts
 * and crashes, a waiting dialog holds no slot and blocks nobody, typed answers, the cancel word,
 * deadlines in days kept across restarts, and code changed under a dialog. A choice that ends
 * with a period, typed as listed, is taken (before, it was refused: its period was dropped from
 * the answer only).
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { z } from "zod";
import { defineBot } from "../../src/bot/define-bot.ts";
import { PromptError } from "../../src/index.ts";
import { CANCELLED_REPLY } from "../../src/pipeline/dialogs/prompt.ts";
import { PROMPT_UNANSWERED } from "../../src/pipeline/dialogs/prompt-error.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SendAsInput } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";
const DAY = 86_400_000;

const QUESTIONS = ["What did you do yesterday?", "What will you do today?", "Any blockers?"];

const survey = defineBot({
  setup(bot) {
    bot.command("survey", async (ctx) => {
      const startedAt = ctx.now();
      const answers: string[] = [];
      for (const q of QUESTIONS) answers.push((await ctx.prompt(q, { timeout: "3d" })).text);
      await ctx.state.update<number>("surveys", (n) => (n ?? 0) + 1);
      // The first run's time, read again by every replay: the whole dialog's length.
      await ctx.reply(`${answers.join(" / ")} (${Math.floor((ctx.now() - startedAt) / 60_000)} min)`);
    });
    bot.command("size", async (ctx) => {
      try {
        const size = await ctx.prompt("Which size: small or large?", {
          schema: z.enum(["small", "large"]),
          tries: 2,
        });
        await ctx.reply(`One ${size.value} coffee.`);
      } catch (err) {
        if (err instanceof PromptError && err.code === "PROMPT_TIMEOUT")
          await ctx.reply("No answer: no coffee.");
        else throw err;
      }
    });
    bot.command("when", async (ctx) => {
      const when = await ctx.prompt("When?", { choices: ["Now.", "Later."] });
      await ctx.reply(`${when.value} it is.`);
    });
    bot.command("ping", (ctx) => ctx.reply("pong"));
  },
});

let clock: TestClock;
let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  clock = new TestClock();
  sandbox = await startSandbox({ clock });
  bot = await runBot(sandbox, { bot: survey, name: "survey", clock, config: "concurrency: 2" });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const dm = (content: string): SendAsInput => ({ type: "direct", to: [bot.email], content });
/** The bot's messages to `email`'s direct conversation, oldest first. */
const said = (email: string) => {
  const id = sandbox.control.users().find((u) => u.email === email)!.user_id;
  return bot
    .replies()
    .filter((m) => m.type === "private" && m.display_recipient.some((r) => r.id === id))
    .map((m) => m.content);
};

async function answerAll(email: string, answers: string[]): Promise<void> {
  for (const answer of answers) await bot.ask(email, dm(answer));
}

it("asks three questions in turn and files each answer under its own question", async () => {
  expect((await bot.ask(MEMBER, dm("survey"))).content).toBe(QUESTIONS[0]);
  expect((await bot.ask(MEMBER, dm("shipped the search"))).content).toBe(QUESTIONS[1]);
  expect((await bot.ask(MEMBER, dm("review"))).content).toBe(QUESTIONS[2]);
  await clock.advance(5 * 60_000);
  const summary = "shipped the search / review / none (5 min)";
  expect((await bot.ask(MEMBER, dm("none"))).content).toBe(summary);
  expect(said(MEMBER)).toEqual([...QUESTIONS, summary]);
});

it("a waiting dialog holds no slot: three wait with concurrency 2, and a fourth person is answered at once", async () => {
  const people = ["a", "b", "c"].map((n) => {
    const email = `${n}@sandbox.example`;
    sandbox.control.createUser({ email, full_name: `Person ${n}`, channels: ["general"] });
    return email;
  });
  for (const email of people) expect((await bot.ask(email, dm("survey"))).content).toBe(QUESTIONS[0]);
  // Nobody answers; the clock does not move: only a free slot can answer this.
  expect((await bot.ask(MEMBER, dm("ping"))).content).toBe("pong");
  // Each dialog still goes on, answered in any order.
  expect((await bot.ask(people[2]!, dm("c1"))).content).toBe(QUESTIONS[1]);
  expect((await bot.ask(people[0]!, dm("a1"))).content).toBe(QUESTIONS[1]);
});

it("in a channel only the asked person's next message in that topic answers; others are handled at once", async () => {
  const topic = (content: string, t = "standup"): SendAsInput => ({
    type: "stream",
    to: "general",
    topic: t,
    content: `@**survey** ${content}`,
  });
  expect((await bot.ask(MEMBER, topic("survey"))).content).toBe(QUESTIONS[0]);
  // Someone else's command in the same topic, and the person's own in another topic: at once.
  expect((await bot.ask(OWNER, topic("ping"))).content).toBe("pong");
  expect((await bot.ask(MEMBER, topic("ping", "elsewhere"))).content).toBe("pong");
  // The person's next message in the topic is the answer.
  expect((await bot.ask(MEMBER, topic("did things"))).content).toBe(QUESTIONS[1]);
});

it("a graceful restart mid-dialog resumes at its step; an answer sent while the bot is down is taken at start", async () => {
  await bot.ask(MEMBER, dm("survey"));
  await bot.ask(MEMBER, dm("one"));
  await bot.restart();
  expect((await bot.ask(MEMBER, dm("two"))).content).toBe(QUESTIONS[2]);
  // Down: the answer waits on the server, and is caught up at start.
  await bot.restart({
    bot: survey,
  });
  const last = await bot.ask(MEMBER, dm("three"));
  expect(last.content).toMatch(/^one \/ two \/ three/);
  expect(said(MEMBER)).toEqual([...QUESTIONS, last.content]);
});

it("a crash mid-dialog (handlers cut off) asks nothing twice and files nothing under the wrong question", async () => {
  await bot.ask(MEMBER, dm("survey"));
  const answer = bot.post(MEMBER, dm("one"));
  // Cut off whatever runs now: the answer's run may be anywhere.
  await bot.restart({ crash: true });
  expect((await bot.nextReply({ after: answer, timeoutMs: 5_000 })).content).toBe(QUESTIONS[1]);
  await answerAll(MEMBER, ["two"]);
  await bot.restart({ crash: true });
  const done = await bot.ask(MEMBER, dm("three"));
  expect(done.content).toMatch(/^one \/ two \/ three/);
  expect(said(MEMBER)).toEqual([...QUESTIONS, done.content]);
});

it("a refused answer is asked again with the reason; the tries run out with a reply; the cancel word ends it", async () => {
  await bot.ask(MEMBER, dm("size"));
  const again = await bot.ask(MEMBER, dm("medium"));
  expect(again.content).toMatch(/^I could not use that: .*small.*large.*\. Which size: small or large\?$/);
  expect((await bot.ask(MEMBER, dm("large"))).content).toBe("One large coffee.");

  await bot.ask(MEMBER, dm("size"));
  await bot.ask(MEMBER, dm("tiny"));
  expect((await bot.ask(MEMBER, dm("huge"))).content).toMatch(/^That makes 2 answers I could not use/);

  await bot.ask(MEMBER, dm("size"));
  expect((await bot.ask(MEMBER, dm("Cancel"))).content).toBe(CANCELLED_REPLY);
  // The dialog is over: the next message is an ordinary one.
  expect((await bot.ask(MEMBER, dm("ping"))).content).toBe("pong");
});

it("a choice that ends with a period is taken typed as listed, or without its period (a space before it too)", async () => {
  expect((await bot.ask(MEMBER, dm("when"))).content).toBe("When?\n1. Now.\n2. Later.");
  expect((await bot.ask(MEMBER, dm("Later."))).content).toBe("Later. it is.");
  await bot.ask(MEMBER, dm("when"));
  expect((await bot.ask(MEMBER, dm("now"))).content).toBe("Now. it is.");
  // A space before the final period, as a phone's keyboard leaves it.
  await bot.ask(MEMBER, dm("when"));
  expect((await bot.ask(MEMBER, dm("later ."))).content).toBe("Later. it is.");
});

it("a deadline that passes while the bot is down runs the timeout branch once at start", async () => {
  await bot.ask(MEMBER, dm("size"));
  const asked = bot.replies().at(-1)!.id;
  await bot.restart();
  await clock.advance(2 * 3_600_000);
  expect((await bot.nextReply({ after: asked })).content).toBe("No answer: no coffee.");
  await bot.restart();
  await clock.advance(DAY);
  expect(bot.replies().filter((m) => m.content === "No answer: no coffee.")).toHaveLength(1);
});

it("an uncaught timeout after 3 days ends the dialog with one info line; a late answer is an ordinary message", async () => {
  await bot.ask(MEMBER, dm("survey"));
  await clock.advance(3 * DAY - 60_000);
  expect((await bot.ask(MEMBER, dm("late but in time"))).content).toBe(QUESTIONS[1]);
  await clock.advance(3 * DAY + 1);
  await expect.poll(() => bot.logs().filter((l) => l.msg === PROMPT_UNANSWERED).length).toBe(1);
  expect((await bot.ask(MEMBER, dm("ping"))).content).toBe("pong");
});

it.each([
  [
    "after the deadline: the timeout branch first, then the message as an ordinary one",
    2,
    ["No answer: no coffee.", "I don't know the command `large`. Say `help` for the list."],
  ],
  [
    "before the deadline: its answer, though the deadline passed before the start",
    0.5,
    ["One large coffee."],
  ],
])("an answer sent while the bot was down, %s", async (_, hoursLater, replies) => {
  const question = await bot.ask(MEMBER, dm("size"));
  await bot.stop();
  await clock.advance(hoursLater * 3_600_000);
  await bot.post(MEMBER, dm("large"));
  // The bot starts after the deadline (an hour): its timer fires at once.
  await clock.advance(2 * 3_600_000);
  await bot.start();
  await expect.poll(() => said(MEMBER).slice(said(MEMBER).indexOf(question.content) + 1)).toEqual(replies);
});

it("code changed under a dialog stops it with a message to the person and a warn line naming the step", async () => {
  await bot.ask(MEMBER, dm("survey"));
  await bot.ask(MEMBER, dm("one"));
  const changed = defineBot({
    setup(b) {
      b.command("survey", async (ctx) => {
        await ctx.prompt(QUESTIONS[0]!, { timeout: "3d" });
        await ctx.prompt("What is your mood?", { timeout: "3d" });
        await ctx.reply("never here");
      });
    },
  });
  await bot.restart({ bot: changed });
  const told = await bot.ask(MEMBER, dm("two"));
  expect(told.content).toMatch(/updated in the middle of our conversation/);
  const warn = bot.logs().find((l) => String(l.msg).includes("no longer matches this dialog"));
  expect(warn).toMatchObject({ level: 40, bot: "survey", user: "Mel Member", step: 2 });
  expect(said(MEMBER)).not.toContain("never here");
});

// The guide's way to reword a question under waiting dialogs: give it an `id`. Given in a deploy
// of its own (the text as it was), the dialogs that asked it go on; a question asked after that
// is asked by its id, and a later rewording of it keeps them too. Before, an id given to a
// question asked without one stopped every dialog that had asked it.
it("an id given to questions dialogs asked keeps them going; a question asked since can be reworded", async () => {
  const named = (texts: string[]) =>
    defineBot({
      setup(b) {
        b.command("survey", async (ctx) => {
          const startedAt = ctx.now();
          const answers: string[] = [];
          for (const [i, q] of texts.entries())
            answers.push((await ctx.prompt(q, { id: `q${i + 1}`, timeout: "3d" })).text);
          await ctx.state.update<number>("surveys", (n) => (n ?? 0) + 1);
          await ctx.reply(`${answers.join(" / ")} (${Math.floor((ctx.now() - startedAt) / 60_000)} min)`);
        });
      },
    });
  await bot.ask(MEMBER, dm("survey"));
  await bot.ask(MEMBER, dm("one"));
  await bot.restart({ bot: named(QUESTIONS) });
  expect((await bot.ask(MEMBER, dm("two"))).content).toBe(QUESTIONS[2]);
  await bot.restart({
    bot: named([QUESTIONS[0]!, QUESTIONS[1]!, "Anything in your way?"]),
  });
  expect((await bot.ask(MEMBER, dm("three"))).content).toBe("one / two / three (0 min)");
  expect(said(MEMBER)).toEqual([...QUESTIONS, "one / two / three (0 min)"]);
  expect(bot.logs().filter((l) => String(l.msg).includes("no longer matches"))).toEqual([]);
});

it.each([
  ["returns at once", async () => {}],
  [
    "replies instead",
    (ctx: { reply(text: string): Promise<unknown> }) => ctx.reply("The survey is retired."),
  ],
])(
  "code that no longer asks the waiting question (it %s) stops the dialog, the person told",
  async (_, run) => {
    await bot.ask(MEMBER, dm("survey"));
    await bot.restart({ bot: defineBot({ setup: (b) => b.command("survey", run) }) });
    const told = await bot.ask(MEMBER, dm("one"));
    expect(told.content).toMatch(/updated in the middle of our conversation/);
    const warn = bot.logs().find((l) => String(l.msg).includes("no longer matches this dialog"));
    expect(warn).toMatchObject({ level: 40, bot: "survey", step: 1 });
    expect(bot.dialogs()).toEqual([]);
    expect(said(MEMBER)).toEqual([QUESTIONS[0], told.content]);
  },
);

it("a handler that fails after an answer runs again with the answer in place", async () => {
  let fail = 1;
  const flaky = defineBot({
    setup(b) {
      b.command("order", async (ctx) => {
        const size = await ctx.prompt("Which size?");
        if (fail-- > 0) throw new Error("the first run after the answer fails");
        await ctx.reply(`One ${size.text}.`);
      });
    },
  });
  await bot.restart({ bot: flaky });
  await bot.ask(MEMBER, dm("order"));
  const answer = bot.post(MEMBER, dm("large"));
  await clock.advance(60_000); // past the retry's pause
  expect((await bot.nextReply({ after: answer })).content).toBe("One large.");
  expect(said(MEMBER)).toEqual(["Which size?", "One large."]);
});

it("ctx.state expiry follows the test clock", async () => {
  const keeper = defineBot({
    setup(b) {
      b.command("keep", async (ctx) => {
        await ctx.state.set("note", "kept", { ttlMs: 60_000 });
        await ctx.reply("kept");
      });
      b.command("read", async (ctx) => ctx.reply(String((await ctx.state.get("note")) ?? "gone")));
    },
  });
  await bot.restart({ bot: keeper });
  await bot.ask(MEMBER, dm("keep"));
  expect((await bot.ask(MEMBER, dm("read"))).content).toBe("kept");
  await clock.advance(61_000);
  expect((await bot.ask(MEMBER, dm("read"))).content).toBe("gone");
});

it("ctx.startDialog asks a person who did not write first, in a direct message, once per key; never the bot", async () => {
  const memberId = sandbox.control.users().find((u) => u.email === MEMBER)!.user_id;
  const kickoff = defineBot({
    setup(b) {
      b.command("survey", async (ctx) => {
        const a = await ctx.prompt(QUESTIONS[0]!);
        await ctx.reply(`noted: ${a.text} (${ctx.sender.name})`);
      });
      b.command("kickoff", async (ctx) => {
        const first = await ctx.startDialog(memberId, "survey");
        const again = await ctx.startDialog(memberId, "survey");
        // A group the bot is in lists the bot too: it cannot be asked.
        const self = await ctx.startDialog(ctx.bot.userId, "survey");
        await ctx.reply(`started: ${first}, again: ${again}, the bot: ${self}`);
      });
    },
  });
  await bot.restart({ bot: kickoff });
  expect((await bot.ask(OWNER, dm("kickoff"))).content).toBe("started: true, again: false, the bot: false");
  await expect.poll(() => said(MEMBER)).toEqual([QUESTIONS[0]]);
  await bot.restart({ crash: true });
  expect((await bot.ask(MEMBER, dm("in the lab"))).content).toBe("noted: in the lab (Mel Member)");
  expect(said(MEMBER)).toEqual([QUESTIONS[0], "noted: in the lab (Mel Member)"]);
});
