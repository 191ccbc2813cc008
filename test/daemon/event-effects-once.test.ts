/**
 * The effects of a handler of another event than a message (`update_message`, `reaction`) are made
 * once, through a real daemon against the sandbox: a handler that sent (or called `ctx.external`)
 * and then threw sends nothing twice when the failure stage runs it again; a send whose answer was
 * lost (no local echo: the bot's queue brings no message events) is read back by the retry, bounded
 * by the time the first attempt ran; each event keeps its records apart (two edits of one message,
 * two reactions); a send to the empty topic, named "(no topic)" or "general chat", is found by
 * that read-back too, and so is one whose content the server stored without its trailing
 * whitespace or leading blank lines; a dead letter replayed after a restart repeats none of the
 * event's effects.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import type { SendMessageParams } from "../../src/api/resources/messages.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "event-bot@sandbox.example";
const RETRIES = "retries: { attempts: 3, backoff: 50ms, max_backoff: 50ms }";

let running: InProcessDaemon | undefined;

const world = useSandbox({ bots: { [BOT]: "Events" } });

const post = (content: string) =>
  world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content }).id;
const member = () =>
  createClient({ url: world.sandbox.url, email: MEMBER, apiKey: world.sandbox.control.apiKeyOf(MEMBER) });
const edit = (id: number, content: string) => member().messages.update(id, { content });
const sentByBot = () => world.messagesFrom(BOT).map((m) => String(m.content));
const inFlight = () => running?.daemon.bots[0]?.status.inFlight;
const say = (content: string) => ({ type: "stream" as const, to: "general", topic: "t", content });

/** The daemon's time moved by the test (the retries' pauses), then `read`. */
const moving =
  <T>(clock: ManualClock, read: () => T | Promise<T>) =>
  async () => {
    await clock.tick(50);
    return read();
  };

/**
 * Starts a bot whose handler of `type` says "seen" (the same words for every event: a key shared
 * by two events would take one's reply for the other's), then throws on its first run for each
 * event (named by `name`). Returns how often it ran for the event named so, once none is in flight.
 */
async function failingOnceEach(
  type: "reaction" | "update_message",
  name: (e: Record<string, unknown>) => string,
) {
  const counts = new Map<string, number>();
  const bot = defineBot({
    setup(b) {
      b.on(type, async (ctx) => {
        const event = name(ctx.event as unknown as Record<string, unknown>);
        const n = (counts.get(event) ?? 0) + 1;
        counts.set(event, n);
        await ctx.send(say("seen"));
        if (n === 1) throw new Error("fails after the reply");
      });
    },
  });
  const clock = new ManualClock(Date.now());
  running = await world.daemon({ events: { email: BOT, definition: bot, extra: RETRIES } }, { clock });
  return (key: string) => moving(clock, async () => ((await inFlight()) === 0 ? counts.get(key) : undefined));
}

describe("a handler of another event than a message, that made effects and then threw", () => {
  it("an edit's handler: its reply and its external call are made once across its retries", async () => {
    let [runs, calls] = [0, 0];
    const bot = defineBot({
      setup(b) {
        b.on("update_message", async (ctx) => {
          runs++;
          const ticket = await ctx.external("open ticket", async () => ({ id: ++calls }));
          await ctx.send(say(`edit seen, ticket ${ticket.id}`));
          if (runs < 3) throw new Error("fails after the reply");
          await ctx.send(say("edit handled"));
        });
      },
    });
    const clock = new ManualClock(Date.now());
    running = await world.daemon({ events: { email: BOT, definition: bot, extra: RETRIES } }, { clock });
    await edit(post("hello"), "hello, edited");
    await expect
      .poll(moving(clock, sentByBot), { timeout: 10_000 })
      .toEqual(["edit seen, ticket 1", "edit handled"]);
    expect([runs, calls]).toEqual([3, 1]);
  });

  it("a reaction's handler: its reply is made once, and another reaction's reply is its own", async () => {
    const runs = await failingOnceEach("reaction", (e) => String(e.emoji_name));
    const id = post("react here");
    await member().reactions.add(id, { emoji_name: "tada" });
    await expect.poll(runs("tada"), { timeout: 10_000 }).toBe(2);
    await member().reactions.add(id, { emoji_name: "octopus" });
    await expect.poll(runs("octopus"), { timeout: 10_000 }).toBe(2);
    expect(sentByBot()).toEqual(["seen", "seen"]);
  });

  it("two edits of one message, each failing once after the same reply: one reply per edit", async () => {
    const runs = await failingOnceEach("update_message", (e) => String(e.content));
    const id = post("v1");
    await edit(id, "v2");
    await expect.poll(runs("v2"), { timeout: 10_000 }).toBe(2);
    await edit(id, "v3");
    await expect.poll(runs("v3"), { timeout: 10_000 }).toBe(2);
    expect(sentByBot()).toEqual(["seen", "seen"]);
  });

  it("a send whose answer was lost is found by the retry's read-back, not made again", async () => {
    const runs = await lostFirstSend([say("edit seen"), say("edit handled")]);
    expect(runs).toBe(2);
    expect(sentByBot()).toEqual(["edit seen", "edit handled"]);
  });
});

/**
 * Starts a bot whose edit handler makes `sends`, edits a message, and has the server store the
 * first send and answer it with a 503 (no message event echoes it): the handler runs again.
 * Returns how often it ran, once none is in flight.
 */
async function lostFirstSend(sends: SendMessageParams[]): Promise<number> {
  let runs = 0;
  const bot = defineBot({
    setup(b) {
      b.on("update_message", async (ctx) => {
        runs++;
        for (const params of sends) await ctx.send(params);
      });
    },
  });
  const clock = new ManualClock(Date.now());
  running = await world.daemon({ events: { email: BOT, definition: bot, extra: RETRIES } }, { clock });
  const id = post("hello");
  world.sandbox.control.failNext(1, { status: 503, after: true, paths: [/^\/messages$/], methods: ["POST"] });
  await edit(id, "hello, edited");
  await expect
    .poll(
      moving(clock, () => runs),
      { timeout: 10_000 },
    )
    .toBe(2);
  await expect.poll(moving(clock, inFlight)).toBe(0);
  return runs;
}

describe("a send to the empty topic whose answer was lost", () => {
  // Stored under "" (feature level 334 and later), however the handler named the topic: the
  // retry's read-back narrows to where it is stored, and finds it.
  it.each([["(no topic)"], ["general chat"], [" (no topic) "]])(
    "to %j is found by the retry's read-back, not made again",
    async (topic) => {
      await lostFirstSend([{ type: "stream", to: "general", topic, content: "edit seen" }]);
      const replies = world.messagesFrom(BOT).map((m) => [m.topic, m.content]);
      expect(replies).toEqual([["", "edit seen"]]);
    },
  );
});

describe("a send whose content the server stored changed, whose answer was lost", () => {
  // The server strips trailing whitespace and leading newlines: the read-back matches the content
  // as stored, not as the handler wrote it.
  it.each([["edit seen \n"], ["\n\nedit seen"]])(
    "%j is found by the retry's read-back, not made again",
    async (content) => {
      await lostFirstSend([say(content)]);
      expect(sentByBot()).toEqual(["edit seen"]);
    },
  );
});

describe("a dead letter of another event than a message", () => {
  it("replayed after a restart, repeats none of what its attempts made", async () => {
    let fixed = false;
    const bot = defineBot({
      setup(b) {
        b.on("update_message", async (ctx) => {
          await ctx.send(say("step 1"));
          if (!fixed) throw new Error("bug after step 1");
          await ctx.send(say("step 2"));
        });
      },
    });
    const stateDir = await mkdtemp(path.join(tmpdir(), "bothost-event-once-"));
    try {
      const bots = {
        events: { email: BOT, definition: bot, extra: "retries: { attempts: 2, backoff: 50ms }" },
      };
      const clock = new ManualClock(Date.now());
      running = await world.daemon(bots, { stateDir, clock });
      await edit(post("hello"), "hello, edited");
      const letters = moving(clock, () => running!.daemon.letters.list());
      await expect.poll(async () => (await letters()).length, { timeout: 10_000 }).toBe(1);
      const [letter] = await running.daemon.letters.list();
      expect(letter?.effects).toHaveLength(1);
      expect(letter?.records?.key).toMatch(/^q:.+\/\d+$/);
      await running.stop();
      running = await world.daemon(bots, { stateDir, clock });
      fixed = true;
      await running.daemon.letters.retry({ all: true });
      await expect.poll(sentByBot, { timeout: 10_000 }).toEqual(["step 1", "step 2"]);
      await expect.poll(() => running!.daemon.letters.list(), { timeout: 5_000 }).toEqual([]);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
