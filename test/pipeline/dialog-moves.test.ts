/**
 * A waiting question's topic moved (renamed, resolved, moved to another channel), against the
 * sandbox over HTTP in a real daemon: the dialog follows its question, so the answer sent in the
 * new place is taken and what the dialog says goes there, while the replay still matches what it
 * said before the move; a move made while the bot was down is found at its next start; a move
 * that did not take the question changes nothing; every dialog waiting in a moved topic follows;
 * the empty topic is a topic like any other (read back as "", never as the realm's name for it).
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox, SendAsInput } from "../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../src/testing/run-bot.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { renewed, surveyCommand } from "../support/two-questions.ts";

const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";

const survey = defineBot({
  setup(bot) {
    surveyCommand(bot);
    bot.command("ask-there", async (ctx) => {
      const mood = await ctx.prompt("Your mood?", { where: { channel: "general", topic: "moods" } });
      await ctx.reply(`mood: ${mood.text}`);
    });
    bot.command("ping", (ctx) => ctx.reply("pong"));
  },
});

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  const clock = new TestClock();
  sandbox = await startSandbox({ clock });
  bot = await runBot(sandbox, { bot: survey, name: "survey", clock });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const inTopic = (content: string, topic = "standup", to = "general"): SendAsInput => ({
  type: "stream",
  to,
  topic,
  content: `@**survey** ${content}`,
});

/** Calls the sandbox's API as the owner. */
async function asOwner(method: string, path: string, params: Record<string, string> = {}) {
  const auth = Buffer.from(`${OWNER}:${sandbox.control.apiKeyOf(OWNER)}`).toString("base64");
  const query = method === "GET" ? `?${new URLSearchParams(params)}` : "";
  const res = await fetch(`${sandbox.url}/api/v1${path}${query}`, {
    method,
    headers: { authorization: `Basic ${auth}`, "content-type": "application/x-www-form-urlencoded" },
    ...(method === "GET" ? {} : { body: new URLSearchParams(params) }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** Moves message `id` and the rest of its topic (`change_all`), as the owner. */
async function move(id: number, to: { topic?: string; channel?: string }, mode = "change_all") {
  const params: Record<string, string> = { propagate_mode: mode };
  if (to.topic !== undefined) params.topic = to.topic;
  if (to.channel !== undefined)
    params.stream_id = String((await asOwner("GET", "/get_stream_id", { stream: to.channel })).stream_id);
  await asOwner("PATCH", `/messages/${id}`, params);
}

/** The bot's messages, as `topic: content`, oldest first. */
function botSaid(): string[] {
  const botId = sandbox.control.users().find((u) => u.email === bot.email)!.user_id;
  return sandbox.control
    .messages()
    .filter((m) => m.sender_id === botId)
    .map((m) => `${m.topic}: ${m.content}`);
}

it("a resolved topic: the answer there is taken, and the dialog goes on there, its earlier replies not made again", async () => {
  await bot.ask(MEMBER, inTopic("survey"));
  const noted = await bot.ask(MEMBER, inTopic("one"));
  await bot.nextReply({ after: noted.id });
  await renewed(bot);
  const botId = sandbox.control.users().find((u) => u.email === bot.email)!.user_id;
  const [, , q2] = sandbox.control.messages().filter((m) => m.sender_id === botId);
  await move(q2!.id as number, { topic: "✔ standup" });
  await expect.poll(() => bot.dialogs()).toMatchObject([{ where: "#general > ✔ standup", step: 2 }]);
  const done = await bot.ask(MEMBER, inTopic("two", "✔ standup"));
  expect(done.content).toBe("done: one / two");
  // Everything the bot said before the move was moved with the topic; nothing was said twice.
  expect(botSaid()).toEqual([
    "✔ standup: Q1?",
    "✔ standup: noted one",
    "✔ standup: Q2?",
    "✔ standup: done: one / two",
  ]);
  await expect.poll(() => bot.dialogs()).toEqual([]);
});

it("after the move, a message in a topic of the old name is no answer; the answer in the new place is", async () => {
  const q1 = await bot.ask(MEMBER, inTopic("survey"));
  await renewed(bot);
  await move(q1.id, { topic: "standup 29 Nov" });
  // The old name is a new, empty topic now: the person's command there is an ordinary one.
  expect((await bot.ask(MEMBER, inTopic("ping"))).content).toBe("pong");
  expect((await bot.ask(MEMBER, inTopic("one", "standup 29 Nov"))).content).toBe("noted one");
});

it.each([true, false])(
  "a topic moved to another channel (the bot subscribed there: %s): the dialog follows it, and the answer there is taken",
  async (subscribed) => {
    // A channel the bot has seen no message in: its name is read from the server. Not subscribed
    // there, the bot subscribes itself, so that the answer typed there reaches it.
    const principals = JSON.stringify(subscribed ? [MEMBER, bot.email] : [MEMBER]);
    await asOwner("POST", "/users/me/subscriptions", { subscriptions: '[{"name":"archive"}]', principals });
    const q1 = await bot.ask(MEMBER, inTopic("survey"));
    await renewed(bot);
    await move(q1.id, { channel: "archive" });
    await expect.poll(() => bot.dialogs()).toMatchObject([{ where: "#archive > standup" }]);
    const noted = await bot.ask(MEMBER, inTopic("one", "standup", "archive"));
    expect(`${noted.display_recipient} > ${noted.subject}: ${noted.content}`).toBe(
      "archive > standup: noted one",
    );
  },
);

it.each(["✔ standup", ""])(
  "a topic moved (to %j) while the bot was down: found at its next start, before the answer sent there meanwhile",
  async (topic) => {
    const q1 = await bot.ask(MEMBER, inTopic("survey"));
    await renewed(bot);
    await bot.stop();
    await move(q1.id, { topic });
    const answer = await bot.post(MEMBER, inTopic("one", topic));
    await bot.start();
    expect((await bot.nextReply({ after: answer })).content).toBe("noted one");
    expect(
      bot
        .logs()
        .some((l) => l.msg === "waiting questions were moved with their topics: their dialogs follow"),
    ).toBe(true);
    await expect.poll(() => botSaid().at(-1)).toBe(`${topic}: Q2?`);
  },
);

it("a move that leaves the question where it is changes nothing", async () => {
  const first = await bot.post(MEMBER, inTopic("off topic"));
  const q1 = await bot.ask(MEMBER, inTopic("survey"));
  await renewed(bot);
  // Only the earlier message moves.
  await move(first, { topic: "elsewhere" }, "change_one");
  expect((await bot.ask(MEMBER, inTopic("one"))).content).toBe("noted one");
  expect(botSaid()).toContain(`standup: Q1?`);
  expect(q1.subject).toBe("standup");
});

it("two dialogs waiting in one topic, the topic resolved: both follow, and each answer there is taken", async () => {
  const ann = "ann@sandbox.example";
  sandbox.control.createUser({ email: ann, full_name: "Ann", channels: ["general"] });
  const q1 = await bot.ask(MEMBER, inTopic("survey"));
  await renewed(bot);
  await bot.ask(ann, inTopic("survey"));
  await move(q1.id, { topic: "✔ standup" });
  await expect
    .poll(() => bot.dialogs().map((d) => d.where))
    .toEqual(["#general > ✔ standup", "#general > ✔ standup"]);
  expect((await bot.ask(MEMBER, inTopic("one", "✔ standup"))).content).toBe("noted one");
  await expect.poll(() => botSaid().at(-1)).toBe("✔ standup: Q2?");
  expect((await bot.ask(ann, inTopic("uno", "✔ standup"))).content).toBe("noted uno");
});

it("a dialog in the empty topic waits there through its queue's renewal and a restart", async () => {
  expect((await bot.ask(MEMBER, inTopic("survey", ""))).content).toBe("Q1?");
  await renewed(bot);
  await bot.restart();
  expect((await bot.ask(MEMBER, inTopic("one", ""))).content).toBe("noted one");
  expect(bot.logs().some((l) => String(l.msg).includes("the dialog follows it"))).toBe(false);
});

/** The member's `ask-there` in #general > standup: its question waits in #general > moods. */
async function askThere(): Promise<number> {
  const asked = await bot.post(MEMBER, inTopic("ask-there"));
  await expect.poll(() => botSaid()).toEqual(["moods: Your mood?"]);
  await renewed(bot);
  return asked;
}

/** Once the move is recorded, the answer in #general > moods: the result is said at home. */
async function answerMood(): Promise<void> {
  await expect
    .poll(() => bot.logs().some((l) => l.msg === "a dialog's topic moved: the dialog follows it"))
    .toBe(true);
  const answer = await bot.post(MEMBER, { type: "stream", to: "general", topic: "moods", content: "sunny" });
  await bot.nextReply({ after: answer });
}

it("while its question waits elsewhere (`where`), the dialog's own topic resolved: the result goes there", async () => {
  await move(await askThere(), { topic: "✔ standup" });
  await answerMood();
  expect(botSaid()).toEqual(["moods: Your mood?", "✔ standup: mood: sunny"]);
});

it("a topic moved while the bot was down into a channel it is not in: it subscribes there, and the answer sent there meanwhile is taken", async () => {
  await asOwner("POST", "/users/me/subscriptions", {
    subscriptions: '[{"name":"archive"}]',
    principals: JSON.stringify([MEMBER]),
  });
  const q1 = await bot.ask(MEMBER, inTopic("survey"));
  await renewed(bot);
  await bot.stop();
  await move(q1.id, { channel: "archive" });
  // The bot is in no queue of that channel's: the server delivers it nothing of this message.
  const answer = await bot.post(MEMBER, inTopic("one", "standup", "archive"));
  await bot.start();
  expect((await bot.nextReply({ after: answer })).content).toBe("noted one");
  await expect.poll(() => botSaid().at(-1)).toBe("standup: Q2?");
  const q2 = sandbox.control.messages().at(-1)!;
  expect(q2.stream_id).toBe((await asOwner("GET", "/get_stream_id", { stream: "archive" })).stream_id);
});

it("the dialog's own topic resolved while the bot was down, its question waiting elsewhere: found at the next start", async () => {
  const asked = await askThere();
  await bot.stop();
  await move(asked, { topic: "✔ standup" });
  await bot.start();
  await answerMood();
  expect(botSaid()).toEqual(["moods: Your mood?", "✔ standup: mood: sunny"]);
});
