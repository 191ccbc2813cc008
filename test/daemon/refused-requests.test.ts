/**
 * A handler whose request is refused as made (a 400 such as STREAM_DOES_NOT_EXIST, a snippet over
 * its size, refused by the server or by bothost before sending it) is not run again: the sandbox
 * gets the request once, the event is a dead letter at once naming the refusal and the parameter,
 * and its conversation's next message goes on with no pause. A 429 or a 5xx is still retried.
 * The daemon's clock is held: a retry's pause would never pass unless the test moves it.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import type { BotApi } from "../../src/bot/bot-api.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "notes-bot@sandbox.example";
const RETRIES = "retries: { attempts: 3, backoff: 1s, max_backoff: 1s }\nhandler_timeout: 5m";

const world = useSandbox({ bots: { [BOT]: "Notes" } });

/**
 * "save <title>", "raw <title>" save a snippet (ctx.snippets, ctx.api); "post <channel>" posts
 * there; "ask <timeout>" asks a question with that timeout; "unbook <id>" cancels a scheduled
 * message; else "ok".
 */
const notes = defineBot({
  setup(bot: BotApi) {
    bot.on("message", { sender: MEMBER }, async (ctx) => {
      const [verb, arg = ""] = ctx.event.message.content.split(" ", 2);
      if (verb === "save") await ctx.snippets.create(arg, "body");
      else if (verb === "raw") await ctx.api.savedSnippets.create({ title: arg, content: "body" });
      else if (verb === "post") await ctx.send({ type: "channel", to: arg, topic: "t", content: "hello" });
      else if (verb === "ask") await ctx.prompt("How long?", { timeout: arg });
      else if (verb === "unbook") await ctx.schedule.cancel(Number(arg));
      await ctx.reply(`ok ${verb}`);
    });
  },
});

const post = (content: string) =>
  world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "notes", content }).id;
const answers = () => world.messagesFrom(BOT).map((m) => String(m.content));
const calls = (method: string, path: string) =>
  world.sandbox.control.requests.filter((r) => r.method === method && r.path === path).map((r) => r.status);

/**
 * The chat server's failure is no fault of the bot's code: each `handler failed` line is a
 * warning, its stack only the place of the call in the bot's code (this file), no bothost frame.
 */
function expectServerFaultLines(d: InProcessDaemon, type: string, n: number): void {
  const lines = d.logged("handler failed").filter((l) => l.msg === "handler failed");
  expect(lines).toHaveLength(n);
  for (const line of lines) {
    expect(line.level).toBe(40);
    expect(line.err).toMatchObject({ type });
    expect((line.err as { stack: string }).stack).toMatch(
      new RegExp(`^${type}\\n    at test/daemon/refused-requests\\.test\\.ts:\\d+:\\d+$`),
    );
  }
}

async function start(clock: ManualClock): Promise<InProcessDaemon> {
  return world.daemon({ notes: { email: BOT, definition: notes, extra: RETRIES } }, { clock });
}

describe("a request refused as made", () => {
  it("to a channel that does not exist: sent once, kept at once with the server's reason and the parameter", async () => {
    const d = await start(new ManualClock(Date.now()));
    const id = post("post nowhere");
    post("next");
    // Retried, the next message would wait for a pause the held clock never ends.
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["ok next"]);
    expect(calls("POST", "/messages").filter((s) => s === 400)).toEqual([400]);
    const [letter] = await d.daemon.letters.list();
    expect(letter).toMatchObject({ attempts: 1, event: { message: { id } }, error: { name: "ApiError" } });
    expect(letter!.error.message).toContain("STREAM_DOES_NOT_EXIST: Channel 'nowhere' does not exist");
    expect(letter!.error.message).toContain(
      '[request refused by the server (400 STREAM_DOES_NOT_EXIST, parameter stream = "nowhere"): not retried]',
    );
    expect(d.logged("running it again")).toEqual([]);
    expect(d.logged("kept as dead letter notes/1")).toMatchObject([
      {
        level: 50,
        attempts: 1,
        refused: { code: "STREAM_DOES_NOT_EXIST", status: 400, parameter: "stream", value: "nowhere" },
      },
    ]);
    expect(d.logged("kept as dead letter notes/1")[0]!.msg).toContain("refused by the server");
  });

  it("a snippet the server refuses (400 BAD_REQUEST, title too long): saved once, kept naming the title", async () => {
    const d = await start(new ManualClock(Date.now()));
    post(`raw ${"t".repeat(61)}`);
    post("next");
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["ok next"]);
    expect(calls("POST", "/saved_snippets")).toEqual([400]);
    const [letter] = await d.daemon.letters.list();
    expect(letter).toMatchObject({ attempts: 1 });
    expect(letter!.error.message).toContain("title is too long (limit: 60 characters)");
    expect(letter!.error.message).toContain("(400 BAD_REQUEST, parameter title)");
  });

  it("a scheduled message the server does not have (SCHEDULE_NOT_FOUND): sent once, said refused by the server", async () => {
    const d = await start(new ManualClock(Date.now()));
    post("unbook 9999");
    post("next");
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["ok next"]);
    expect(calls("DELETE", "/scheduled_messages/9999")).toEqual([404]);
    const [letter] = await d.daemon.letters.list();
    expect(letter!.error.message).toContain(
      "[request refused by the server (404 SCHEDULE_NOT_FOUND, parameter id): not retried]",
    );
    expect(d.logged("kept as dead letter notes/1")).toMatchObject([
      { refused: { code: "SCHEDULE_NOT_FOUND", status: 404, parameter: "id" } },
    ]);
    // The stack is said once, on the attempt's `handler failed`; the letter's line names the error.
    const [kept] = d.logged("kept as dead letter notes/1");
    expect(kept).not.toHaveProperty("err");
    expect(kept!.error).toMatch(
      /^ScheduledMessageError: schedule\.cancel: scheduled message 9999 does not exist/,
    );
    const stacks = d.logs.filter((l) => (l.err as { stack?: string } | undefined)?.stack).map((l) => l.msg);
    expect(stacks).toEqual(["handler failed"]);
  });

  it("a snippet bothost refuses before sending it (SNIPPET_INVALID): no request, kept at once", async () => {
    const d = await start(new ManualClock(Date.now()));
    post(`save ${"t".repeat(61)}`);
    post("next");
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["ok next"]);
    expect(calls("POST", "/saved_snippets")).toEqual([]);
    const [letter] = await d.daemon.letters.list();
    expect(letter).toMatchObject({ attempts: 1, error: { name: "SnippetError" } });
    expect(letter!.error.message).toContain(
      "Snippet title is 61 characters; the server allows at most 60. Shorten it. " +
        "[request refused before it was sent (SNIPPET_INVALID, parameter title): not retried]",
    );
    expect(d.logged("kept as dead letter notes/1")).toMatchObject([
      { refused: { code: "SNIPPET_INVALID", parameter: "title" } },
    ]);
  });
});

describe("a ctx.prompt() option the code got wrong", () => {
  it("PROMPT_OPTIONS: nothing asked, kept at once naming the option, the next message goes on", async () => {
    const d = await start(new ManualClock(Date.now()));
    post("ask 40d");
    post("next");
    // The question was never sent: the bot's only message is the next one's answer.
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["ok next"]);
    const [letter] = await d.daemon.letters.list();
    expect(letter).toMatchObject({ attempts: 1, error: { name: "BothostError" } });
    expect(letter!.error.message).toContain("timeout must be between 1s and 30d");
    expect(letter!.error.message).toContain(
      "[request refused before it was sent (PROMPT_OPTIONS): not retried]",
    );
  });
});

describe("a refused send retried by the operator", () => {
  /** "post nowhere" kept as dead letter notes/1 after its one refused send. */
  async function refusedLetter() {
    const d = await start(new ManualClock(Date.now()));
    post("post nowhere");
    await expect.poll(async () => (await d.daemon.letters.list()).length, { timeout: 10_000 }).toBe(1);
    return d;
  }
  /** The statuses of the bot's reads of messages (a read-back is one) since the request numbered `from`. */
  const readsSince = (from: number) =>
    world.sandbox.control.requests
      .slice(from)
      .filter((r) => r.method === "GET" && r.path === "/messages" && r.email === BOT)
      .map((r) => r.status);

  it("the channel still missing: sent again and refused with the same reason, no read-back", async () => {
    const d = await refusedLetter();
    const before = world.sandbox.control.requests.length;
    expect(await d.daemon.letters.retry({ all: true })).toEqual({ done: ["notes/1"], missing: [] });
    const again = async () => (await d.daemon.letters.list()).find((l) => l.attempts === 2);
    await expect.poll(again, { timeout: 10_000 }).toBeDefined();
    const letter = await again();
    // Not a refused read-back of a channel that does not exist (400 BAD_NARROW): the send's own refusal.
    expect(letter!.error.message).not.toContain("BAD_NARROW");
    expect(letter!.error.message).toContain("STREAM_DOES_NOT_EXIST: Channel 'nowhere' does not exist");
    expect(readsSince(before)).toEqual([]);
    expect(calls("POST", "/messages").filter((s) => s === 400)).toEqual([400, 400]);
    // The send was refused, so neither letter carries it as an effect that may have been made.
    expect(letter!.effects ?? []).toEqual([]);
  });

  it("the channel made meanwhile: sent there at once, with no read-back", async () => {
    const d = await refusedLetter();
    const member = createClient({
      url: world.sandbox.url,
      email: MEMBER,
      apiKey: world.sandbox.control.apiKeyOf(MEMBER),
    });
    await member.channels.subscribe({ subscriptions: [{ name: "nowhere" }] });
    const before = world.sandbox.control.requests.length;
    await d.daemon.letters.retry({ all: true });
    await expect.poll(answers, { timeout: 10_000 }).toEqual(["hello", "ok post"]);
    await expect.poll(async () => d.daemon.letters.list(), { timeout: 5_000 }).toEqual([]);
    expect(readsSince(before)).toEqual([]);
  });
});

describe("a temporary failure is still retried", () => {
  /** Moves the held clock until the snippet is saved and its message answered. */
  async function untilAnswered(clock: ManualClock, stepMs: number): Promise<void> {
    await expect
      .poll(
        async () => {
          await clock.tick(stepMs);
          return answers();
        },
        { timeout: 10_000 },
      )
      .toEqual(["ok raw"]);
  }

  it("a 5xx: the handler runs again after its pause, and the third attempt saves the snippet", async () => {
    const clock = new ManualClock(Date.now());
    const d = await start(clock);
    const body = { result: "error", msg: "Service unavailable" };
    world.sandbox.control.failNext(2, { status: 503, body, paths: ["/saved_snippets"], methods: ["POST"] });
    post("raw Welcome");
    await untilAnswered(clock, 250);
    expect(calls("POST", "/saved_snippets")).toEqual([503, 503, 200]);
    expect(d.logged("handler failed; running it again after a pause")).toHaveLength(2);
    expectServerFaultLines(d, "ApiError", 2);
    expect(await d.daemon.letters.list()).toEqual([]);
  });

  it("a 429 asking a longer wait than the client takes: the handler runs again once the wait is over", async () => {
    const clock = new ManualClock(Date.now());
    const d = await start(clock);
    const body = {
      result: "error",
      msg: "API usage exceeded rate limit",
      code: "RATE_LIMIT_HIT",
      "retry-after": 61,
    };
    world.sandbox.control.failNext(1, { status: 429, body, paths: ["/saved_snippets"], methods: ["POST"] });
    post("raw Welcome");
    await untilAnswered(clock, 5_000);
    expect(calls("POST", "/saved_snippets")).toEqual([429, 200]);
    expect(d.logged("handler failed; running it again after a pause")).toHaveLength(1);
    expectServerFaultLines(d, "RateLimitError", 1);
    expect(await d.daemon.letters.list()).toEqual([]);
  });
});
