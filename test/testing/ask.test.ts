/**
 * `ask()` takes the bot's reply in the asker's conversation that follows the asking message:
 * asks made at once in one topic each get their own reply, in the order they were asked, and
 * `nextReply`'s `where` picks among the bot's messages.
 */
import { defineBot } from "bothost";
import { describe, expect, test } from "bothost/testing/vitest";
import echo from "../../bots/echo.ts";

const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";

const inTopic = (topic: string, content: string) => ({
  type: "channel" as const,
  to: "general",
  topic,
  content: `@**echo** ${content}`,
});

describe("concurrent asks", () => {
  test("in one topic, each takes the reply to its own message", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo" });
    const replies = await Promise.all([
      bot.ask(MEMBER, inTopic("lunch", "one")),
      bot.ask(OWNER, inTopic("lunch", "two")),
      bot.ask(MEMBER, inTopic("lunch", "three")),
    ]);
    expect(replies.map((r) => r.content)).toEqual(["one", "two", "three"]);
    const ids = replies.map((r) => r.id);
    expect(new Set(ids).size).toBe(3);
  });

  test("in two topics, each takes the reply in its own topic", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo" });
    const [a, b] = await Promise.all([
      bot.ask(MEMBER, inTopic("lunch", "pizza")),
      bot.ask(MEMBER, inTopic("dinner", "soup")),
    ]);
    expect([a.subject, a.content, b.subject, b.content]).toEqual(["lunch", "pizza", "dinner", "soup"]);
  });

  test("an ask whose message goes unanswered says its later replies went to earlier asks", async ({
    runBot,
  }) => {
    const picky = defineBot({
      setup(bot) {
        bot.on("message", { addressed: true }, async (ctx) => {
          if (ctx.text !== "quiet") await ctx.reply(`re: ${ctx.text}`);
        });
      },
    });
    const bot = await runBot({ bot: picky, name: "echo" });
    const first = bot.ask(MEMBER, inTopic("t", "hello"));
    const second = bot.ask(OWNER, inTopic("t", "quiet"), { timeoutMs: 1_000 });
    const reply = await first;
    expect(reply.content).toBe("re: hello");
    await expect(second).rejects.toThrow(
      new RegExp(`within 1000 ms \\(its messages there after it, ${reply.id}, answered earlier asks\\)$`),
    );
  });
});

describe("nextReply's where", () => {
  test("takes the first of the bot's messages it accepts", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo" });
    const after = bot.post(MEMBER, inTopic("a", "first"));
    bot.post(MEMBER, inTopic("b", "second"));
    const inB = await bot.nextReply({ after, where: (m) => m.type === "stream" && m.subject === "b" });
    expect(inB.content).toBe("second");
  });

  test("given up, it names the bot's messages it refused, not a silent bot", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo" });
    const after = bot.post(MEMBER, inTopic("a", "first"));
    const reply = await bot.nextReply({ after });
    await expect(bot.nextReply({ after, where: () => false, timeoutMs: 200 })).rejects.toThrow(
      new RegExp(
        `^echo sent no message that \`where\` accepts after message ${after} \\("@\\*\\*echo\\*\\* first" from ${MEMBER} in #general > a\\) within 200 ms \\(\`where\` refused its message ${reply.id} \\("first"\\)\\)$`,
      ),
    );
  });
});

describe("a silent bot's message says why, when the kit can tell", () => {
  const dm = (to: string, content: string) => ({ type: "direct" as const, to: [to], content });

  test("it is stopped", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo" });
    await bot.stop();
    await expect(bot.ask("member@sandbox.example", dm(bot.email, "hi"), { timeoutMs: 200 })).rejects.toThrow(
      /^echo sent no message after message \d+ \("hi" from member@sandbox\.example in a direct message to echo-bot@sandbox\.example\) within 200 ms \(it is stopped: start\(\) it, and it catches the message up\)$/,
    );
  });

  test("it was asked as the bot itself, or after a message the sandbox does not have", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo" });
    await expect(bot.ask(bot.email, dm("member@sandbox.example", "hi"), { timeoutMs: 200 })).rejects.toThrow(
      /within 200 ms \(it was posted as echo itself: a bot handles none of its own messages\)$/,
    );
    await expect(bot.nextReply({ after: 99_999, timeoutMs: 200 })).rejects.toThrow(
      /^echo sent no message after message 99999 within 200 ms \(the sandbox has no message 99999\)$/,
    );
  });

  test("the message never reached it", async ({ runBot }) => {
    const bot = await runBot({ bot: echo, name: "echo" });
    await expect(
      bot.ask("member@sandbox.example", dm("owner@sandbox.example", "hi"), { timeoutMs: 200 }),
    ).rejects.toThrow(
      /within 200 ms \(the message never reached it: it is not in that direct message or channel\)$/,
    );
  });

  test("the server refused its calls for the rate limit", async ({ runBot, sandbox }) => {
    const bot = await runBot({ bot: echo, name: "echo" });
    // The calls of its start are in the minute already: its reply is refused.
    sandbox.control.setUserRateLimit(bot.email, [[60, 1]]);
    await expect(
      bot.ask("member@sandbox.example", dm(bot.email, "hi"), { timeoutMs: 1_000 }),
    ).rejects.toThrow(
      /within 1000 ms \(the server refused \d+ of its calls for the account's rate limit: it waits for the budget, on the test's clock\)$/,
    );
  });

  test("its own pacing holds its reply: the server refused nothing", async ({ runBot, sandbox }) => {
    // Posts 20 notes to a channel, then answers: its own budget of 20 calls a minute (the calls
    // of its start among them) is spent before the answer, which waits for the minute.
    const chatty = defineBot({
      setup(bot) {
        bot.on("message", { direct: true }, async (ctx) => {
          for (let i = 0; i < 20; i++) {
            await ctx.send({ type: "channel", to: "general", topic: "notes", content: `note ${i}` });
          }
          await ctx.reply("done");
        });
      },
    });
    const bot = await runBot({ bot: chatty, name: "chatty", config: "rate_limit: { per_minute: 20 }" });
    await expect(bot.ask(MEMBER, dm(bot.email, "go"), { timeoutMs: 1_000 })).rejects.toThrow(
      /^chatty sent no message after message \d+ \("go" from member@sandbox\.example in a direct message to chatty-bot@sandbox\.example\) within 1000 ms \(the server refused none of its calls: they wait for its own rate budget \(`rate_limit`\), 20 calls a minute \(20 used\) and 2000 an hour \(20 used\), the next in \d+ s on the test's clock\)$/,
    );
    expect(sandbox.control.requests.filter((r) => r.status === 429)).toEqual([]);
  });

  // A failed run is recorded as handled: the line says it failed, not that it handled the message.
  const failing = defineBot({
    setup(bot) {
      bot.on("message", { direct: true }, () => {
        throw new Error("kaboom");
      });
    },
  });

  test("its handler failed every attempt: kept as a dead letter", async ({ runBot }) => {
    const bot = await runBot({ bot: failing, name: "failing", config: "retries: { attempts: 1 }" });
    const id = bot.post(MEMBER, dm(bot.email, "go"));
    await expect(bot.handled(id)).rejects.toThrow(/kept as dead letter/);
    await expect(bot.nextReply({ after: id, timeoutMs: 100 })).rejects.toThrow(
      /within 100 ms \(its handler failed every attempt \(1 attempt, kept as dead letter failing\/\d+\): kaboom\)$/,
    );
  });

  test("the run of a dialog's answer failed every attempt: kept as a dead letter", async ({ runBot }) => {
    const asking = defineBot({
      setup(bot) {
        bot.command("go", async (ctx) => {
          await ctx.prompt("number?");
          throw new Error("kaboom");
        });
      },
    });
    const bot = await runBot({ bot: asking, name: "asking", config: "retries: { attempts: 1 }" });
    expect((await bot.ask(MEMBER, dm(bot.email, "go"))).content).toBe("number?");
    const answer = bot.post(MEMBER, dm(bot.email, "7"));
    await expect(bot.handled(answer)).rejects.toThrow(/kept as dead letter/);
    await expect(bot.nextReply({ after: answer, timeoutMs: 100 })).rejects.toThrow(
      /within 100 ms \(its handler failed every attempt \(1 attempt, kept as dead letter asking\/\d+\): kaboom\)$/,
    );
  });

  test("its handler failed and runs again after a pause", async ({ runBot }) => {
    const config = "retries: { attempts: 2, backoff: 10m }";
    const bot = await runBot({ bot: failing, name: "failing", config });
    const id = bot.post(MEMBER, dm(bot.email, "go"));
    await expect.poll(() => bot.logs().some((l) => l.msg === "handler failed")).toBe(true);
    await expect(bot.nextReply({ after: id, timeoutMs: 100 })).rejects.toThrow(
      /within 100 ms \(its handler failed \(kaboom\) and runs again after a pause\)$/,
    );
  });
});
