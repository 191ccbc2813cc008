/**
 * `bot.handled(messageId)`: a test of a bot that does not answer (it counts, it reacts) waits
 * until the bot's pipeline has finished the message, as the bot's delivery ledger records it, and
 * learns why when it never does (the message did not reach the bot, the handler failed).
 */
import { defineBot } from "bothost";
import { createBotTest, describe, expect, test } from "bothost/testing/vitest";

const MEMBER = "member@sandbox.example";
/** Tests whose clock stands still between advances: a retry's pause passes only where moved. */
const held = createBotTest({ clock: { held: true } });

describe("bot.handled", () => {
  test("resolves once a bot that answers nothing has counted the message and reacted", async ({
    runBot,
    sandbox,
  }) => {
    const seen: string[] = [];
    const counter = defineBot({
      setup(bot) {
        bot.on("message", { contains: /thanks/i }, async (ctx) => {
          await ctx.react("heart");
          seen.push(ctx.event.message.content);
        });
      },
    });
    const bot = await runBot({ bot: counter, name: "counter" });
    const first = bot.post(MEMBER, { type: "stream", to: "general", topic: "t", content: "thanks!" });
    const second = bot.post(MEMBER, { type: "stream", to: "general", topic: "t", content: "many thanks" });
    await bot.handled(second);
    await bot.handled(first);
    expect(seen).toEqual(["thanks!", "many thanks"]);
    const reactions = sandbox.control.messageView(first)?.reactions as { emoji_name: string }[];
    expect(reactions.map((r) => r.emoji_name)).toEqual(["heart"]);
    expect(bot.replies()).toEqual([]);
  });

  test("rejects at once for a message that never reached the bot", async ({ runBot }) => {
    const bot = await runBot({ bot: defineBot({ setup: () => {} }), name: "outsider" });
    const id = bot.post("owner@sandbox.example", {
      type: "stream",
      to: "moderation",
      topic: "private",
      content: "staff only",
    });
    await expect(bot.handled(id)).rejects.toThrow(
      `message ${id} ("staff only" from owner@sandbox.example in #moderation > private) never reached outsider: it is not in that direct message or channel`,
    );
  });

  test("rejects at once for a message of a bot that takes no message events", async ({ runBot }) => {
    const watcher = defineBot({
      setup(bot) {
        bot.on("reaction", () => {});
      },
    });
    const bot = await runBot({ bot: watcher, name: "watcher" });
    const id = bot.post(MEMBER, { type: "stream", to: "general", topic: "t", content: "hi" });
    await expect(bot.handled(id, { timeoutMs: 1_000 })).rejects.toThrow(
      `message ${id} ("hi" from member@sandbox.example in #general > t) never reached watcher: its queue takes no message events (it handles none)`,
    );
  });

  test("rejects with the handler's error once every attempt failed", async ({ runBot }) => {
    const broken = defineBot({
      setup(bot) {
        bot.on("message", () => {
          throw new Error("the counter is broken");
        });
      },
    });
    const bot = await runBot({ bot: broken, name: "broken", config: "retries: { attempts: 1 }" });
    const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "count me" });
    await expect(bot.handled(id)).rejects.toThrow(
      new RegExp(
        `^broken's handler failed on message ${id} \\(.*\\) \\(1 attempt, kept as dead letter broken/\\d+\\): the counter is broken$`,
      ),
    );
  });

  held("on timeout, says the handler failed and waits to run again", async ({ runBot, clock }) => {
    let runs = 0;
    const flaky = defineBot({
      setup(bot) {
        bot.on("message", () => {
          runs++;
          throw new Error("not yet");
        });
      },
    });
    const bot = await runBot({ bot: flaky, name: "flaky", config: "retries: { attempts: 3, backoff: 20s }" });
    const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "try" });
    // The first run failed (and said so) once its retry's pause is set: on this clock it never ends.
    await expect.poll(() => clock.pendingDelays()).toContain(20_000);
    await expect(bot.handled(id, { timeoutMs: 500 })).rejects.toThrow(
      new RegExp(
        `^flaky did not finish handling message ${id} \\(.*\\) within 500 ms: its handler failed \\(not yet\\)`,
      ),
    );
    expect(runs).toBe(1);
  });

  test("a crash in the retry's pause: waits for the replay the restart runs, which succeeds", async ({
    runBot,
  }) => {
    let runs = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const flaky = defineBot({
      setup(bot) {
        bot.on("message", async () => {
          runs++;
          if (runs === 1) throw new Error("first run fails");
          await gate; // the replay still runs when handled() is asked
        });
      },
    });
    const bot = await runBot({ bot: flaky, name: "flaky", config: "retries: { attempts: 3, backoff: 20s }" });
    const id = bot.post(MEMBER, { type: "direct", to: [bot.email], content: "try" });
    await expect.poll(() => bot.logs().some((l) => l.msg === "handler failed")).toBe(true);
    // Cut in its pause, the run is kept marked for replay: no final failure, it runs at the restart.
    await bot.restart({ crash: true });
    await expect.poll(() => runs).toBe(2);
    const handled = bot.handled(id);
    setTimeout(release, 200);
    await handled;
  });

  test("resolves for a message its handler ran again and finished", async ({ runBot }) => {
    let runs = 0;
    const second = defineBot({
      setup(bot) {
        bot.on("message", () => {
          runs++;
          if (runs === 1) throw new Error("first run fails");
        });
      },
    });
    const bot = await runBot({
      bot: second,
      name: "second",
      config: "retries: { attempts: 2, backoff: 50ms }",
    });
    await bot.handled(bot.post(MEMBER, { type: "direct", to: [bot.email], content: "again" }));
    expect(runs).toBe(2);
  });

  // An answer to a `ctx.prompt` is recorded in the dialog's log (that marks it handled) before the
  // dialog's handler runs again on it: handled() and progress() wait for that run too.
  const deployer = defineBot({
    setup(bot) {
      bot.command("deploy", async (ctx) => {
        const go = await ctx.prompt("Deploy now?", { choices: ["yes", "no"] });
        if (go.value === "no") {
          await ctx.reply("Not deployed.");
          return;
        }
        const progress = await ctx.progress("Deploying…");
        progress.append("step 1 done");
        await progress.done("Deployed.");
      });
    },
  });

  test("an answer to a prompt: resolves once the run it began has said what it says", async ({ runBot }) => {
    const bot = await runBot({ bot: deployer, name: "deployer" });
    await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "deploy" });
    await bot.handled(bot.post(MEMBER, { type: "direct", to: [bot.email], content: "no" }));
    expect(bot.replies().map((m) => m.content)).toEqual(["Deploy now?\n1. yes\n2. no", "Not deployed."]);
  });

  test("handled() of a question still waiting says it waits for the answer, and what to give instead", async ({
    runBot,
  }) => {
    const bot = await runBot({ bot: deployer, name: "deployer" });
    const question = await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "deploy" });
    await expect(bot.handled(question.id, { timeoutMs: 300 })).rejects.toThrow(
      `deployer did not finish handling message ${question.id} ("Deploy now?\\n1. yes\\n2. no" from deployer-bot@sandbox.example in a direct message to member@sandbox.example) within 300 ms (it is deployer's own message: handled() of a question waits until it is answered, timed out or ended; to wait for the run that asked it, give the id of the message that led to it)`,
    );
  });

  test("progress() of a handler that failed every attempt shows the progress ended as failed, and why", async ({
    runBot,
  }) => {
    const builder = defineBot({
      setup(bot) {
        bot.command("build", async (ctx) => {
          const progress = await ctx.progress("Building…");
          progress.update("step 1 done");
          throw new Error("the build server exploded");
        });
      },
    });
    const bot = await runBot({ bot: builder, name: "builder", config: "retries: { attempts: 1 }" });
    const view = await bot.progress(bot.post(MEMBER, { type: "direct", to: [bot.email], content: "build" }));
    expect(view.text).toBe("step 1 done\n\n(failed: the work stopped before it finished)");
    expect(view.failed).toMatch(/kept as dead letter .*: the build server exploded/);
  });

  test("a dialog's later answer whose run failed is not taken for its earlier messages' runs", async ({
    runBot,
  }) => {
    const form = defineBot({
      setup(bot) {
        bot.command("form", async (ctx) => {
          const name = await ctx.prompt("Name?");
          const age = await ctx.prompt("Age?");
          if (age.text === "boom") throw new Error("the form exploded");
          await ctx.reply(`${name.text}, ${age.text}`);
        });
      },
    });
    const bot = await runBot({ bot: form, name: "form", config: "retries: { attempts: 1 }" });
    const dm = { type: "direct" as const, to: [bot.email] };
    const start = bot.post(MEMBER, { ...dm, content: "form" });
    await bot.handled(start);
    const name = bot.post(MEMBER, { ...dm, content: "Ada" });
    await bot.handled(name);
    const age = bot.post(MEMBER, { ...dm, content: "boom" });
    await expect(bot.handled(age)).rejects.toThrow(/kept as dead letter form\/\d+\): the form exploded$/);
    // The dialog's first message asked "Name?", and "Ada" asked "Age?": those runs finished.
    await bot.handled(name);
    await bot.handled(start);
    expect(bot.replies().map((m) => m.content)).toEqual(["Name?", "Age?"]);
  });

  test("a failed dialog that read the clock, a random number and an external is kept as a dead letter", async ({
    runBot,
  }) => {
    // The dialog's record carries which values are externals (a name) and which are not: plain
    // JSON, as the store takes it, or the letter is refused and the event lost.
    const survey = defineBot({
      setup(bot) {
        bot.command("survey", async (ctx) => {
          const started = ctx.now();
          const pick = ctx.random();
          const seq = await ctx.external("seq", async () => 7);
          const answer = await ctx.prompt("Ready?");
          if (answer.text === "boom") throw new Error("the survey exploded");
          await ctx.reply(`${started > 0} ${pick < 1} ${seq}`);
        });
      },
    });
    const bot = await runBot({ bot: survey, name: "survey", config: "retries: { attempts: 1 }" });
    const dm = { type: "direct" as const, to: [bot.email] };
    await bot.handled(bot.post(MEMBER, { ...dm, content: "survey" }));
    const boom = bot.post(MEMBER, { ...dm, content: "boom" });
    await expect(bot.handled(boom)).rejects.toThrow(
      /kept as dead letter survey\/\d+\): the survey exploded$/,
    );
    expect(bot.logs().filter((l) => l.msg === "could not keep the failed event as a dead letter")).toEqual(
      [],
    );
  });

  held("progress() of an answer shows the text the run it began finished with", async ({ runBot, clock }) => {
    const bot = await runBot({ bot: deployer, name: "deployer" });
    await bot.ask(MEMBER, { type: "direct", to: [bot.email], content: "deploy" });
    const view = bot.progress(bot.post(MEMBER, { type: "direct", to: [bot.email], content: "yes" }));
    // The progress's next edit comes due on the clock: moved until the view is in.
    let shown: { text: string } | undefined;
    void view.then((v) => (shown = v));
    await expect
      .poll(async () => {
        await clock.advance(1_000);
        return shown?.text;
      })
      .toBe("Deployed.");
  });
});
