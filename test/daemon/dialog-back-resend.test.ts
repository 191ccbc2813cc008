/**
 * A question asked again (a `back`, or a loop asking the same words) whose send the server made
 * with its answer lost and no echo of it come: the handler's next attempt looks for the send among
 * the bot's messages. It must find the new one, not the earlier message with the same words: else
 * the dialog waits at that old question, whose earlier button press answers it again (its reply
 * said twice), and a press on the question the person sees decides nothing. The same for a
 * progress's first post: else the earlier progress is edited and the new one stays as it began.
 * And a booking looked for after its answer was lost: the one to the same person, not someone
 * else's booking of the same words at the same time.
 * A real daemon in this process on a held test clock against the sandbox over HTTP.
 */
import { afterEach, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { ECHO_WAIT_MS } from "../../src/effects/local-echo.ts";
import type { BotContext } from "../../src/pipeline/context.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";

const BOT = "deploy-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";
const DAY = 86_400_000;
const QUESTION = "Deploy api 1.4.2?\n1. :check: approve\n2. :cross_mark: reject";

const deploys = defineBot({
  setup(bot) {
    bot.track("reactions");
    bot.command("deploy", async (ctx) => {
      const decision = await ctx.prompt("Deploy api 1.4.2?", {
        choices: { approve: "check", reject: "cross_mark" },
      });
      await ctx.reply(`${decision.value}: noted.`);
      const note = await ctx.prompt("Release note?");
      await ctx.reply(`Release note: ${note.text}`);
    });
    bot.command("pick", async (ctx) => {
      for (let n = 1; ; n++) {
        const more = await ctx.prompt("Another one?", { choices: { yes: "check", no: "cross_mark" } });
        if (more.value === "no") return ctx.reply(`${n} picked.`);
      }
    });
    bot.command("build", async (ctx) => {
      for (let n = 1; ; n++) {
        const progress = await ctx.progress("Building api…");
        await progress.done(`Building api… built (${n}).`);
        const more = await ctx.prompt("Again?", { choices: { yes: "check", no: "cross_mark" } });
        if (more.value === "no") return ctx.reply(`${n} built.`);
      }
    });
    bot.command("check", async (ctx) => {
      const where = await ctx.prompt("Where?", { choices: { staging: "star", prod: "rocket" } });
      const progress = await ctx.progress(`Checking ${where.value}…`);
      await progress.done(`Checking ${where.value}… ok (${progress.messageId}).`);
      const go = await ctx.prompt("Go?", { choices: { yes: "check", no: "cross_mark" } });
      await ctx.reply(go.value === "yes" ? "Gone." : "Stayed.");
    });
    // The same reminder booked, the same snippet saved, at each turn: each turn's is its own.
    const nine = (now: number) => Math.ceil(now / DAY) * DAY + DAY + 9 * 3_600_000;
    const made = {
      book: async (ctx: BotContext<unknown>) =>
        (await ctx.schedule.at({ to: [MEMBER], content: "Stand-up at 9!", at: nine(ctx.now()) }))
          .scheduledMessageId,
      save: async (ctx: BotContext<unknown>) => (await ctx.snippets.create("stand-up", "Stand-up at 9!")).id,
    };
    // The same reminder, at the same time, booked for whoever asks, or for whom the person picks.
    // (The server lists a direct message's users without the bot: `remind` names it too.)
    const remind = async (ctx: BotContext<unknown>, to: (string | number)[]) =>
      (await ctx.schedule.at({ to, content: "Stand-up at 9!", at: nine(ctx.now()) })).scheduledMessageId;
    bot.command("remind", async (ctx) =>
      ctx.reply(`Booked: ${await remind(ctx, [ctx.bot.userId, ctx.sender!.email])}`),
    );
    bot.command("remind-whom", async (ctx) => {
      const whom = await ctx.prompt("For whom?", { choices: { me: "star", owner: "rocket" } });
      const id = await remind(ctx, [whom.value === "me" ? MEMBER : OWNER]);
      await ctx.prompt("Done?", { choices: { yes: "check", no: "cross_mark" } });
      await ctx.reply(`Booked: ${id}`);
    });
    for (const [name, make] of Object.entries(made))
      bot.command(name, async (ctx) => {
        const ids: Array<number | undefined> = [];
        for (;;) {
          ids.push(await make(ctx));
          const more = await ctx.prompt("Again?", { choices: { yes: "check", no: "cross_mark" } });
          if (more.value === "no") return ctx.reply(`Made: ${ids.join(", ")}`);
        }
      });
  },
});

let up: GatedDaemon | undefined;
afterEach(() => closeGatedDaemon(up));

const FAILED = "handler failed; running it again after a pause";
const start = () =>
  startGatedDaemon({
    name: "deploys",
    email: BOT,
    fullName: "Deploys",
    definition: deploys,
    clock: new TestClock({ held: true }),
    extra: "retries: { attempts: 3, backoff: 1s }",
  });
const waitFor = (check: () => void) =>
  expect
    .poll(
      () => {
        check();
        return true;
      },
      { timeout: 15_000 },
    )
    .toBe(true);

const userId = (email: string) => up!.sandbox.control.users().find((u) => u.email === email)!.user_id;
const press = (id: number, emoji: string) =>
  createClient({
    url: up!.sandbox.url,
    email: MEMBER,
    apiKey: up!.sandbox.control.apiKeyOf(MEMBER),
  }).reactions.add(id, { emoji_name: emoji });
/** The bot's messages, oldest first. */
const said = () =>
  up!.sandbox.control
    .messages()
    .filter((m) => m.sender_id === userId(BOT))
    .map((m) => ({ id: Number(m.id), content: String(m.content) }));

/** The bot's `n`th message (from 1) once it shows with both its buttons: its id. */
async function buttonsOn(n: number): Promise<number> {
  const { control } = up!.sandbox;
  const buttons = () => {
    const m = said()[n - 1];
    const mine = ((control.messageView(Number(m?.id))?.reactions ?? []) as { user_id: number }[]).filter(
      (r) => r.user_id === userId(BOT),
    );
    return mine.length === 2 && m!.id;
  };
  return control.waitFor(buttons, { timeoutMs: 15_000 }).catch((err: unknown) => {
    // No buttons: the dialog took another message for the question; what the person read says how.
    expect(said().map((m) => m.content)).toEqual([]);
    throw err;
  });
}

/** The dialog waits at its question (its log kept). */
const waiting = () =>
  expect
    .poll(() => up!.running.daemon.bots[0]!.dialogs().map((d) => d.deadline !== undefined), {
      timeout: 15_000,
    })
    .toEqual([true]);

/**
 * `command` started, its first question answered with `emoji` up to the next question (the bot's
 * `n`th message), then a `back`: the first question asked again, waiting; its message id.
 */
async function backAfter(command: string, emoji: string, n: number): Promise<number> {
  up!.dm(command);
  await press(await buttonsOn(1), emoji);
  await buttonsOn(n);
  await waiting();
  up!.dm("back");
  const again = await buttonsOn(n + 1);
  await waiting();
  return again;
}

/**
 * `ask` leads to the bot's `n`th message, a question asked again (or a progress's first post,
 * `echo` false: it waits for no echo; or to a call to `path`, a booking): the server stores it
 * and its answer is lost (502), its echo held with the bot's polls; the send's attempt gives up
 * waiting for the echo, and the handler runs again after its pause, once the polls go on.
 */
async function lostSend(n: number, ask: () => unknown, { echo = true, path = /^\/messages$/ } = {}) {
  const { control } = up!.sandbox;
  const clock = up!.clock;
  await waitFor(() =>
    expect(control.queues().filter((q) => q.email === BOT)).toMatchObject([
      { pending_events: 0, parked: true },
    ]),
  );
  control.failNext(1, { status: 502, after: true, paths: [path], methods: ["POST"] });
  control.delay(600_000, { paths: [/^\/events$/] });
  ask();
  await control.waitFor(() => said().length === n, { timeoutMs: 15_000 });
  if (echo) {
    await waitFor(() => expect(clock.pendingDelays()).toContain(ECHO_WAIT_MS));
    await clock.advance(ECHO_WAIT_MS);
  }
  await expect.poll(() => up!.running.logged(FAILED).length, { timeout: 15_000 }).toBe(1);
  control.delay(0);
  await waitFor(() => expect(clock.pendingDelays()).toContain(1_000));
  await clock.advance(1_000);
}

it("a question asked again after a `back`, its send made with its answer lost: its button decides, the old press does not", async () => {
  up = await start();
  up.dm("deploy");
  await press(await buttonsOn(1), "check");
  await expect.poll(() => said().length, { timeout: 15_000 }).toBe(3);
  await waiting();
  await lostSend(4, () => up!.dm("back"));
  await waiting();
  await press(await buttonsOn(4), "cross_mark");
  await expect.poll(() => said().length, { timeout: 15_000 }).toBe(6);
  await waiting();
  expect(said().map((m) => m.content)).toEqual([
    QUESTION,
    "approve: noted.",
    "Release note?",
    QUESTION,
    "reject: noted.",
    "Release note?",
  ]);
});

it("a dialog that asks the same question again, its send made with its answer lost: its button answers it", async () => {
  up = await start();
  const ANOTHER = "Another one?\n1. :check: yes\n2. :cross_mark: no";
  up.dm("pick");
  const first = await buttonsOn(1);
  await waiting();
  await lostSend(2, () => press(first, "check"));
  await waiting();
  await press(await buttonsOn(2), "cross_mark");
  await expect.poll(() => said().length, { timeout: 15_000 }).toBe(3);
  expect(said().map((m) => m.content)).toEqual([ANOTHER, ANOTHER, "2 picked."]);
});

it("a progress opened again after a `back`, its first post made with its answer lost: the new one is finished, the old one kept", async () => {
  up = await start();
  const [WHERE, GO] = [
    "Where?\n1. :star: staging\n2. :rocket: prod",
    "Go?\n1. :check: yes\n2. :cross_mark: no",
  ];
  const again = await backAfter("check", "star", 3);
  await lostSend(5, () => press(again, "star"), { echo: false });
  await press(await buttonsOn(6), "check");
  await expect.poll(() => said().length, { timeout: 15_000 }).toBe(7);
  const ids = said().map((m) => m.id);
  expect(said().map((m) => m.content)).toEqual([
    WHERE,
    `Checking staging… ok (${ids[1]}).`,
    GO,
    WHERE,
    `Checking staging… ok (${ids[4]}).`,
    GO,
    "Gone.",
  ]);
});

it("a dialog that opens the same progress at each turn, its first post made with its answer lost: the new one is finished", async () => {
  up = await start();
  const AGAIN = "Again?\n1. :check: yes\n2. :cross_mark: no";
  up.dm("build");
  const first = await buttonsOn(2);
  await waiting();
  await lostSend(3, () => press(first, "check"), { echo: false });
  const again = await buttonsOn(4);
  const turns = ["Building api… built (1).", AGAIN, "Building api… built (2).", AGAIN];
  expect(said().map((m) => m.content)).toEqual(turns);
  await press(again, "cross_mark");
  await expect.poll(() => said().length, { timeout: 15_000 }).toBe(5);
  expect(said().map((m) => m.content)).toEqual([...turns, "2 built."]);
});

it.each([
  ["book", /^\/scheduled_messages$/],
  ["save", /^\/saved_snippets$/],
])(
  "a dialog that %ss the same at each turn, its create made with its answer lost: each turn gets its own",
  async (name, path) => {
    up = await start();
    up.dm(name);
    const first = await buttonsOn(1);
    await waiting();
    await lostSend(1, () => press(first, "check"), { echo: false, path });
    await press(await buttonsOn(2), "cross_mark");
    await expect.poll(() => said().length, { timeout: 15_000 }).toBe(3);
    expect(said()[2]!.content).toBe("Made: 1, 2");
  },
);

const BOOKINGS = /^\/scheduled_messages$/;
/** The bot's bookings: their ids and the user ids of their direct messages. */
const booked = () => up!.sandbox.control.scheduled().map((s) => [s.scheduled_message_id, s.to]);

it("the same reminder booked for two people at the same time, the second create made with its answer lost: each gets their own", async () => {
  up = await start();
  up.sandbox.control.sendAs(OWNER, { type: "direct", to: [BOT], content: "remind" });
  await expect.poll(() => said().map((m) => m.content), { timeout: 15_000 }).toEqual(["Booked: 1"]);
  await lostSend(1, () => up!.dm("remind"), { echo: false, path: BOOKINGS });
  await expect.poll(() => said().length, { timeout: 15_000 }).toBe(2);
  expect(said()[1]!.content).toBe("Booked: 2");
  expect(booked()).toEqual([
    [1, [userId(OWNER)]],
    [2, [userId(MEMBER)]],
  ]);
});

it("a reminder booked for another person after a `back`, its create made with its answer lost: the new booking is the one held", async () => {
  up = await start();
  const again = await backAfter("remind-whom", "star", 2);
  await lostSend(3, () => press(again, "rocket"), { echo: false, path: BOOKINGS });
  await press(await buttonsOn(4), "check");
  await expect.poll(() => said().length, { timeout: 15_000 }).toBe(5);
  expect(said()[4]!.content).toBe("Booked: 2");
  expect(booked()).toEqual([
    [1, [userId(MEMBER)]],
    [2, [userId(OWNER)]],
  ]);
});

it.each([
  ["book", BOOKINGS],
  ["save", /^\/saved_snippets$/],
])(
  "a dialog that %ss the same again after a `back`, its create made with its answer lost: the new one is held, not the rewound turn's",
  async (name, path) => {
    up = await start();
    const again = await backAfter(name, "check", 2);
    await lostSend(3, () => press(again, "check"), { echo: false, path });
    await press(await buttonsOn(4), "cross_mark");
    await expect.poll(() => said().length, { timeout: 15_000 }).toBe(5);
    expect(said()[4]!.content).toBe("Made: 1, 3");
  },
);
