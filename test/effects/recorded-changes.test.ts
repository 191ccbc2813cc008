/**
 * The calls of `ctx.snippets` and `ctx.schedule` that change the server are recorded effects: a
 * run again (a dialog's replay, a retry) is handed what the first run got, and one whose answer
 * was lost is looked for on the server, not made again. Made again, a dialog that ensured a
 * snippet was stopped as if its code had changed ("unchanged" now, so its reply was not sent),
 * and a cancel met a 404. Public kit, sandbox over HTTP.
 */
import { type BotDefinition, defineBot } from "bothost";
import { type BotFixtures, createBotTest, describe, expect } from "bothost/testing/vitest";

const MEMBER = "member@sandbox.example";
const test = createBotTest();
const held = createBotTest({ clock: { held: true } });

const writes = (requests: readonly { method: string; path: string }[], from: number, path: RegExp) =>
  requests
    .slice(from)
    .map((r) => `${r.method} ${r.path}`)
    .filter((r) => /^(POST|PATCH|DELETE) /.test(r) && path.test(r));

/**
 * Runs `bot` on a message whose first run's `method` call to `path` is made on the server and
 * its answer replaced by a 502 (a proxy timing out after the commit); the retry, 5 s later on
 * the held clock, runs to the end. Resolves the index of the sandbox's requests before the message.
 */
async function lostThenRetried(
  { runBot, sandbox, clock }: Pick<BotFixtures, "runBot" | "sandbox" | "clock">,
  bot: BotDefinition,
  method: string,
  path: RegExp,
): Promise<number> {
  const running = await runBot({ bot, name: "keeper", config: "retries: { attempts: 2, backoff: 5s }" });
  const from = sandbox.control.requests.length;
  sandbox.control.failNext(1, { status: 502, after: true, paths: [path], methods: [method] });
  const id = running.post(MEMBER, { type: "direct", to: [running.email], content: "go" });
  await expect.poll(() => clock.pendingDelays()).toContain(5_000);
  await clock.advance(5_000);
  await running.handled(id);
  return from;
}

describe("recorded changes of snippets and bookings", () => {
  test("a dialog that ensured a snippet goes on at its answer, told what the first run did", async ({
    runBot,
  }) => {
    const saver = defineBot({
      setup(bot) {
        bot.command("save", async (ctx) => {
          const { action } = await ctx.snippets.ensure("Rules", "Be kind.");
          if (action === "created") await ctx.reply("Saved a new snippet.");
          const share = await ctx.prompt("Share it with the team?");
          await ctx.reply(`OK (${share.text}).`);
        });
      },
    });
    const bot = await runBot({ bot: saver, name: "saver" });
    const dm = { type: "direct" as const, to: [bot.email] };
    await bot.ask(MEMBER, { ...dm, content: "save" });
    // Answered once asked: a message older than the question is not its answer.
    await expect.poll(() => bot.replies().at(-1)?.content).toBe("Share it with the team?");
    const answer = bot.post(MEMBER, { ...dm, content: "yes" });
    await bot.handled(answer);
    expect(bot.replies().map((m) => m.content)).toEqual([
      "Saved a new snippet.",
      "Share it with the team?",
      "OK (yes).",
    ]);
  });

  test("a dialog that cancelled and moved bookings does neither again at its answer", async ({
    runBot,
    sandbox,
  }) => {
    const planner = defineBot({
      setup(bot) {
        bot.command("plan", async (ctx) => {
          const hour = 3_600_000;
          const first = await ctx.schedule.at({ to: [ctx.sender!.id], content: "one", at: ctx.now() + hour });
          const second = await ctx.schedule.at({
            to: [ctx.sender!.id],
            content: "two",
            at: ctx.now() + hour,
          });
          await ctx.schedule.cancel(first);
          await ctx.schedule.reschedule(second, ctx.now() + 2 * hour);
          const sure = await ctx.prompt("Keep the second?");
          await ctx.reply(`kept: ${sure.text}`);
        });
      },
    });
    const bot = await runBot({ bot: planner, name: "planner" });
    const dm = { type: "direct" as const, to: [bot.email] };
    const from = sandbox.control.requests.length;
    await bot.ask(MEMBER, { ...dm, content: "plan" });
    await bot.handled(bot.post(MEMBER, { ...dm, content: "yes" }));
    expect(bot.replies().map((m) => m.content)).toEqual(["Keep the second?", "kept: yes"]);
    const changes = writes(sandbox.control.requests, from, /scheduled_messages\/\d+/);
    expect(changes.map((r) => r.split(" ")[0])).toEqual(["DELETE", "PATCH"]);
  });

  held(
    "a retry is told what the first run's ensures and delete did, and makes none again",
    async ({ runBot, sandbox, clock }) => {
      const seen: string[] = [];
      let runs = 0;
      const keeper = defineBot({
        setup(bot) {
          bot.on("message", async (ctx) => {
            const draft = await ctx.snippets.ensure("Rules draft", "Be nice?");
            const rules = await ctx.snippets.ensure("Rules", "Be kind.");
            const gone = await ctx.snippets.delete("Rules draft");
            seen.push(`${draft.action} ${rules.action} ${gone}`);
            if (++runs === 1) throw new Error("first run fails");
          });
        },
      });
      const bot = await runBot({
        bot: keeper,
        name: "keeper",
        config: "retries: { attempts: 2, backoff: 5s }",
      });
      const from = sandbox.control.requests.length;
      const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "go" });
      await expect.poll(() => clock.pendingDelays()).toContain(5_000);
      await clock.advance(5_000);
      await bot.handled(id);
      expect(seen).toEqual(["created created true", "created created true"]);
      const changes = writes(sandbox.control.requests, from, /saved_snippets/);
      expect(changes.map((r) => r.split(" ")[0])).toEqual(["POST", "POST", "DELETE"]);
    },
  );

  held(
    "an ensure whose answer was lost is found created on the server by the retry",
    async ({ runBot, sandbox, clock }) => {
      const seen: string[] = [];
      const saver = defineBot({
        setup(bot) {
          bot.on("message", async (ctx) => {
            seen.push((await ctx.snippets.ensure("Rules", "Be kind.")).action);
          });
        },
      });
      const from = await lostThenRetried({ runBot, sandbox, clock }, saver, "POST", /^\/saved_snippets$/);
      expect(seen).toEqual(["created"]);
      expect(writes(sandbox.control.requests, from, /saved_snippets/)).toEqual(["POST /saved_snippets"]);
    },
  );

  held(
    "a delete of one of two same-titled snippets, its answer lost, deletes no twin at the retry",
    async ({ runBot, sandbox, clock }) => {
      const seen: string[] = [];
      const began: number[] = [];
      const cleaner = defineBot({
        setup(bot) {
          bot.track("snippets");
          bot.on("message", async (ctx) => {
            if (ctx.event.message.content === "make") {
              await ctx.snippets.create("Rules", "first");
              await ctx.snippets.create("Rules", "twin");
              return;
            }
            began.push(sandbox.control.requests.length);
            const gone = await ctx.snippets.delete("Rules");
            seen.push(`${gone} ${(await ctx.snippets.list()).map((s) => s.content).join(",")}`);
          });
        },
      });
      const running = await runBot({
        bot: cleaner,
        name: "cleaner",
        config: "retries: { attempts: 2, backoff: 5s }",
      });
      const dm = { type: "direct" as const, to: [running.email] };
      await running.handled(running.post(MEMBER, { ...dm, content: "make" }));
      // The DELETE is made, its answer lost; the client's tries again meet a server that answers
      // none (502 before acting): the run fails, and the event's retry runs 5 s later.
      const paths = [/^\/saved_snippets\/\d+$/];
      sandbox.control.failNext(1, { status: 502, after: true, paths, methods: ["DELETE"] });
      sandbox.control.failNext(4, { status: 502, paths, methods: ["DELETE"] });
      const id = running.post(MEMBER, { ...dm, content: "go" });
      await expect
        .poll(async () => {
          await clock.advance(1_000);
          return seen.length;
        })
        .toBe(1);
      await running.handled(id);
      expect(began).toHaveLength(2);
      expect(seen).toEqual(["true twin"]);
      // The retry found the snippet it aimed at gone: no DELETE of the twin.
      expect(writes(sandbox.control.requests, began[1]!, /saved_snippets/)).toEqual([]);
    },
  );

  held(
    "a move to ctx.now() + 2 h whose answer was lost is found moved by the retry, not made again",
    async ({ runBot, sandbox, clock }) => {
      const hour = 3_600_000;
      const seen: number[] = [];
      const mover = defineBot({
        setup(bot) {
          bot.on("message", async (ctx) => {
            const booking = await ctx.schedule.at({
              to: [ctx.event.message.sender_id],
              content: "reminder",
              at: ctx.now() + hour,
            });
            const at = ctx.now() + 2 * hour; // later on the retry: the clock moved on
            seen.push(at);
            await ctx.schedule.reschedule(booking, at);
          });
        },
      });
      const from = await lostThenRetried(
        { runBot, sandbox, clock },
        mover,
        "PATCH",
        /^\/scheduled_messages\/\d+$/,
      );
      expect(seen).toHaveLength(2);
      expect(
        writes(sandbox.control.requests, from, /scheduled_messages/).map((r) => r.split(" ")[0]),
      ).toEqual(["POST", "PATCH"]);
      const [booked] = sandbox.control.scheduled();
      expect(booked?.scheduled_delivery_timestamp).toBe(Math.ceil(seen[0]! / 1000));
    },
  );
});
