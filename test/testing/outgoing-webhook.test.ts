/**
 * `runBot({ outgoingWebhook })`: the bot runs as an outgoing-webhook bot. The sandbox POSTs each
 * direct message to it and each channel message that mentions it to the bot's listener, as the
 * server does, and posts the reply of the HTTP answer as the bot (client
 * `OutgoingWebhookResponse`); `ask`, `nextReply` and `handled` work as in queue mode.
 */
import { defineBot } from "bothost";
import type { TestBot } from "bothost/testing";
import { createBotTest, describe, expect, test } from "bothost/testing/vitest";

const MEMBER = "member@sandbox.example";
/** The client of a message the server posted from an outgoing webhook's HTTP answer. */
const FROM_ANSWER = "OutgoingWebhookResponse";

const echo = defineBot({
  setup(bot) {
    bot.on("message", (ctx) => ctx.reply(`echo: ${ctx.event.message.content}`));
  },
});

/** Mention the bot in #general (`@**name**`): the server posts echo's answer from the HTTP answer. */
async function expectMentionAnswered(bot: TestBot, name: string) {
  const content = `@**${name}** hey`;
  const reply = await bot.ask(MEMBER, { type: "channel", to: "general", topic: "t", content });
  expect(reply).toMatchObject({ content: `echo: ${content}`, client: FROM_ANSWER });
}

describe("runBot in outgoing-webhook mode", () => {
  test("answers a direct message and a mention in the HTTP answer, which the server posts", async ({
    runBot,
  }) => {
    const bot = await runBot({ bot: echo, name: "echo", outgoingWebhook: true });
    const dm = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "hi" });
    expect(dm).toMatchObject({ content: "echo: hi", client: FROM_ANSWER, sender_email: bot.email });

    const mention = { type: "channel", to: "general", topic: "lunch", content: "@**echo** pizza?" } as const;
    const reply = await bot.ask(MEMBER, mention);
    expect(reply).toMatchObject({ content: "echo: @**echo** pizza?", client: FROM_ANSWER, subject: "lunch" });
    // No queue: the bot's messages come from the HTTP answers alone.
    expect(bot.replies().map((m) => m.client)).toEqual([FROM_ANSWER, FROM_ANSWER]);
  });

  test("a channel message that does not mention the bot never reaches it", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo", outgoingWebhook: true });
    const id = bot.post(MEMBER, { type: "channel", to: "general", topic: "lunch", content: "pizza?" });
    await expect(bot.handled(id)).rejects.toThrow(
      `message ${id} ("pizza?" from ${MEMBER} in #general > lunch) never reached echo: an outgoing-webhook bot is sent only the direct messages to it and the channel messages that mention it`,
    );
  });

  test("waiting after its own reply, the line does not say the message never reached it", async ({
    runBot,
  }) => {
    const bot = await runBot({ bot: echo, name: "echo", outgoingWebhook: true });
    const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "hi" });
    await expect(bot.nextReply({ after: reply.id, timeoutMs: 200 })).rejects.toThrow(
      new RegExp(
        `^echo sent no message after message ${reply.id} \\("echo: hi" from ${bot.email} .*\\) within 200 ms$`,
      ),
    );
  });

  test("the Slack-compatible format: the message is looked up, the answer posted", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo", outgoingWebhook: { interface: "slack" } });
    await expectMentionAnswered(bot, "echo");
  });

  test("stopped, the server cannot reach it; started again, it answers", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo", outgoingWebhook: true });
    await bot.stop();
    const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "there?" });
    const failed = await bot.nextReply({ after: id });
    expect(failed.content).toBe("Failure! Bot is unavailable");
    await bot.start();
    // The server sends that message no more: handled says why at once rather than at its timeout.
    await expect(bot.handled(id, { timeoutMs: 2_000 })).rejects.toThrow(
      `message ${id} ("there?" from ${MEMBER} in a direct message to ${bot.email}) never reached echo: its delivery failed, and the server posted "Failure! Bot is unavailable" (message ${failed.id}) instead of sending it again`,
    );
    expect((await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "now?" })).content).toBe(
      "echo: now?",
    );
  });
});

const held = createBotTest({ clock: { held: true } });

held("a reply after the reply deadline goes through the API", async ({ runBot, clock }) => {
  let release!: () => void;
  const later = new Promise<void>((resolve) => {
    release = resolve;
  });
  const slow = defineBot({
    setup(bot) {
      bot.on("message", async (ctx) => {
        await later;
        await ctx.reply("done");
      });
    },
  });
  const bot = await runBot({ bot: slow, name: "slow", outgoingWebhook: { replyDeadlineMs: 2_000 } });
  const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "go" });
  await expect.poll(() => clock.pendingDelays()).toContain(2_000);
  await clock.advance(2_000);
  // The delivery is kept, then answered without a reply: only then does the handler go on.
  const kept = () => bot.logs().some((l) => String(l.msg).includes("still runs at the reply deadline"));
  await expect.poll(kept).toBe(true);
  release();
  await bot.handled(id);
  const reply = await bot.nextReply({ after: id });
  expect(reply.content).toBe("done");
  expect(reply.client).not.toBe(FROM_ANSWER);
});

held(
  "a stop cuts a delivery in flight at once; its run, kept, is made at the next start",
  async ({ runBot }) => {
    let runs = 0;
    const slow = defineBot({
      setup(bot) {
        bot.on("message", async (ctx) => {
          runs++;
          if (runs === 1)
            await new Promise((_, reject) =>
              ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
            );
          await ctx.reply(`done: ${ctx.text}`);
        });
      },
    });
    const bot = await runBot({ bot: slow, name: "slow", outgoingWebhook: true });
    const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "one" });
    await expect.poll(() => runs).toBe(1);
    // On a held clock the reply deadline never passes: the stop must not wait for it.
    await bot.stop();
    // The cut run's letter and its message's mark are written before the store closes: no error.
    expect(bot.logs().filter((l) => Number(l.level) >= 50)).toEqual([]);
    // Its connection closed unanswered, the server retried it and gave up, the bot being down.
    expect((await bot.nextReply({ after: id })).content).toBe("Failure! Bot is unavailable");
    await bot.start();
    const done = await bot.nextReply({ after: id, where: (m) => m.content.startsWith("done") });
    expect(done.content).toBe("done: one");
    expect(bot.replies().map((m) => m.content)).toEqual(["Failure! Bot is unavailable", "done: one"]);
    // The server gave up on it, but the bot kept its run: recorded handled since the stop kept it,
    // so that a repeat of the delivery by the server runs nothing.
    await bot.handled(id);
  },
);

test("a blank reply is refused by the server, as on a queue, and the answer holds the next", async ({
  runBot,
}) => {
  const blank = defineBot({
    setup(bot) {
      bot.on("message", async (ctx) => {
        try {
          await ctx.reply("  ");
          await ctx.reply("the blank reply went through");
        } catch (err) {
          await ctx.reply(`refused: ${(err as Error).message}`);
        }
      });
    },
  });
  const bot = await runBot({ bot: blank, name: "blank", outgoingWebhook: true });
  const reply = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "hi" });
  expect(reply.content).toMatch(/^refused: .*Message must not be empty/);
  expect(reply.client).toBe(FROM_ANSWER);
});

const withBots = createBotTest({
  org: {
    users: [
      { email: "owner@sandbox.example", full_name: "Olive", role: "owner" },
      { email: MEMBER, full_name: "Mel" },
    ],
    bots: [
      {
        email: "hook-bot@sandbox.example",
        full_name: "Hook",
        type: "outgoing",
        owner: "owner@sandbox.example",
        outgoing: { url: "http://127.0.0.1:9/elsewhere", token: "H".repeat(32), interface: "slack" },
      },
      {
        email: "plain-bot@sandbox.example",
        full_name: "Plain",
        type: "generic",
        owner: "owner@sandbox.example",
      },
    ],
    channels: [
      { name: "general", subscribers: ["owner@sandbox.example", MEMBER, "hook-bot@sandbox.example"] },
    ],
  },
});

withBots(
  "an org's outgoing-webhook bot keeps its token and format; a generic bot is refused",
  async ({ runBot, sandbox }) => {
    const bot = await runBot({
      bot: echo,
      name: "hook",
      email: "hook-bot@sandbox.example",
      outgoingWebhook: true,
    });
    await expectMentionAnswered(bot, "Hook");
    expect(sandbox.control.users().find((u) => u.email === bot.email)?.outgoing_token).toBe("H".repeat(32));

    await expect(
      runBot({ bot: echo, name: "plain", email: "plain-bot@sandbox.example", outgoingWebhook: true }),
    ).rejects.toThrow(
      "runBot: plain-bot@sandbox.example is not an outgoing-webhook bot: outgoingWebhook needs one (an org's bot of type outgoing or embedded), or an email the sandbox has no account for",
    );
  },
);

// Refused before anything is made (no account, no daemon), naming runBot's own option: the kit
// writes these into a config, whose problems would name fields the test never wrote.
test("a mistake in runBot's own options is named as that option", async ({ runBot, sandbox }) => {
  const accounts = sandbox.control.users().length;
  const refusal = (options: Partial<Parameters<typeof runBot>[0]>) =>
    runBot({ bot: echo, ...options }).then(
      () => "started",
      (err: Error) => err.message,
    );
  expect(await refusal({ name: "Help Bot!" })).toBe(
    'runBot: name "Help Bot!" is not a valid bot name: use up to 64 lower-case letters, digits, _ and -, starting with a letter or digit (like moderator or help-bot)',
  );
  expect(
    await refusal({
      name: "hook",
      outgoingWebhook: true,
      config: "outgoing_webhook: { reply_deadline: 2s }",
    }),
  ).toBe(
    "runBot: outgoingWebhook writes the bot's outgoing_webhook entry: leave outgoing_webhook out of config (its reply deadline is outgoingWebhook: { replyDeadlineMs })",
  );
  expect(await refusal({ name: "hook", outgoingWebhook: { replyDeadlineMs: -5 } })).toBe(
    "runBot: outgoingWebhook.replyDeadlineMs is a whole number of milliseconds from 1 to 10000 (the server waits 10 s), not -5",
  );
  expect(await refusal({ name: "hook", outgoingWebhook: { replyDeadlineMs: 60_000 } })).toBe(
    "runBot: outgoingWebhook.replyDeadlineMs is a whole number of milliseconds from 1 to 10000 (the server waits 10 s), not 60000",
  );
  // biome-ignore lint/suspicious/noExplicitAny: what a JavaScript test may pass
  expect(await refusal({ name: "hook", outgoingWebhook: { interface: "teams" as any } })).toBe(
    'runBot: outgoingWebhook.interface is "zulip" or "slack", not "teams"',
  );
  expect(sandbox.control.users()).toHaveLength(accounts);
});

test("the Slack-compatible format carries no direct message: handled says so at once", async ({ runBot }) => {
  const bot = await runBot({ bot: echo, name: "echo", outgoingWebhook: { interface: "slack" } });
  const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "hi" });
  await expect(bot.handled(id)).rejects.toThrow(
    /never reached echo: the Slack-compatible format carries no direct message$/,
  );
  // As the server does: the refusal is posted in the conversation as the bot.
  expect((await bot.nextReply({ after: id })).content).toBe(
    "Failure! Slack outgoing webhooks don't support direct messages.",
  );
});
