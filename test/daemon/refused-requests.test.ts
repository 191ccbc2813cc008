/**
 * A handler whose request is refused as made (a 400 such as STREAM_DOES_NOT_EXIST, a snippet over
 * its size, refused by the server or by bothost before sending it) is not run again: the sandbox
 * gets the request once, the event is a dead letter at once naming the refusal and the parameter,
 * and its conversation's next message goes on with no pause. A 429 or a 5xx is still retried.
 * The daemon's clock is held: a retry's pause would never pass unless the test moves it.
 */
import { describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "notes-bot@sandbox.example";
const RETRIES = "retries: { attempts: 3, backoff: 1s, max_backoff: 1s }\nhandler_timeout: 5m";

const world = useSandbox({ bots: { [BOT]: "Notes" } });

/** "save <title>", "raw <title>" save a snippet (ctx.snippets, ctx.api); "post <channel>" posts there; else "ok". */
const notes = defineBot({
  setup(bot: BotApi) {
    bot.on("message", { sender: MEMBER }, async (ctx) => {
      const [verb, arg = ""] = ctx.event.message.content.split(" ", 2);
      if (verb === "save") await ctx.snippets.create(arg, "body");
      else if (verb === "raw") await ctx.api.savedSnippets.create({ title: arg, content: "body" });
      else if (verb === "post") await ctx.send({ type: "channel", to: arg, topic: "t", content: "hello" });
      await ctx.reply(`ok ${verb}`);
    });
  },
});

const post = (content: string) =>
  world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "notes", content }).id;
const answers = () => world.messagesFrom(BOT).map((m) => String(m.content));
const calls = (method: string, path: string) =>
  world.sandbox.control.requests.filter((r) => r.method === method && r.path === path).map((r) => r.status);

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
    expect(await d.daemon.letters.list()).toEqual([]);
  });
});
