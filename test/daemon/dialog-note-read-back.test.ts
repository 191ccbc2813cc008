/**
 * What saying kept end notes costs at a start, the sandbox's rate limits on. A note whose send
 * certainly did not reach the server (refused with a 429, the account's budget spent) is said
 * with one call, no read-back of the bot's messages: before, each such note cost a GET /messages
 * first (up to two), so 500 notes cost up to 1,500 calls, seven minutes of the account's budget. A note whose send
 * may have gone out (its answer a 5xx: made or not) is looked for first, and said exactly once
 * either way. A real daemon in this process against the sandbox over HTTP.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { dialogDesk } from "../../src/daemon/dialog-desk.ts";
import { type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";
import { botSaid } from "../support/self-killing-bot.ts";

const BOT = "tally-bot@sandbox.example";
const NOTE = "An operator ended this conversation.";
const PEOPLE = ["ann@sandbox.example", "bob@sandbox.example", "cy@sandbox.example"];

const tally = defineBot({
  setup(bot) {
    bot.command("tally", async (ctx) => {
      const size = await ctx.prompt("Which size?", { timeout: "1h" });
      await ctx.reply(`One ${size.text}.`);
    });
  },
});

let up: GatedDaemon | undefined;
afterEach(() => up?.close());

/** The bot's messages, in order. */
const said = (): string[] => botSaid(up!.sandbox, BOT);

/** The tally bot, a dialog with each of `PEOPLE` waiting at its question. */
async function asked() {
  up = await startGatedDaemon({ name: "tally", email: BOT, fullName: "Tally", definition: tally });
  const { control } = up.sandbox;
  for (const email of PEOPLE) {
    control.createUser({ email, full_name: email.split("@")[0]! });
    control.sendAs(email, { type: "direct", to: [BOT], content: "tally" });
  }
  const bot = up.running.daemon.bots[0]!;
  await expect
    .poll(() => bot.dialogs().filter((d) => d.deadline !== undefined).length, { timeout: 15_000 })
    .toBe(PEOPLE.length);
  return bot;
}

/** The calls of the bot's account from request `from` on: GET /messages and POST /messages. */
function calls(from: number) {
  const mine = up!.sandbox.control.requests.slice(from).filter((r) => r.email === BOT);
  const count = (method: string) => mine.filter((r) => r.method === method && r.path === "/messages").length;
  return { reads: count("GET"), sends: count("POST") };
}

/** Restarts the daemon, the sandbox's rate limits on: the calls of its start until every note is said. */
async function restartCounted(notes: number) {
  up!.sandbox.control.setRateLimit(true);
  const from = up!.sandbox.control.requests.length;
  const running = await up!.restart();
  await expect.poll(() => said().filter((s) => s === NOTE).length, { timeout: 15_000 }).toBe(notes);
  // The start's catch-up read done too. Counted before anything else is asked: a new question
  // renews the queue for deletions, with a catch-up and a read of its own.
  await expect.poll(() => running.logged("caught up after a new queue").length, { timeout: 15_000 }).toBe(1);
  const counted = calls(from);
  // And the bot goes on: it answers what comes after.
  up!.sandbox.control.sendAs(PEOPLE[0]!, { type: "direct", to: [BOT], content: "tally" });
  await expect.poll(() => said().at(-1), { timeout: 15_000 }).toBe("Which size?");
  return counted;
}

it("notes whose send the server refused (a 429) cost one call each at the start, no read-back", async () => {
  const bot = await asked();
  // The account's budget spent for two minutes: each note's send refused, nothing made.
  const refused = { result: "error", msg: "API usage exceeded rate limit", code: "RATE_LIMIT_HIT" };
  up!.sandbox.control.failNext(PEOPLE.length, {
    status: 429,
    body: { ...refused, "retry-after": 120 },
    methods: ["POST"],
    paths: ["/messages"],
  });
  const desk = dialogDesk(up!.running.daemon.bots);
  await Promise.all(bot.dialogs().map((d) => desk.endDialog("tally", d.id, NOTE)));
  await expect
    .poll(() => up!.running.logged("could not tell the person their dialog ended").length, {
      timeout: 15_000,
    })
    .toBe(PEOPLE.length);
  const start = await restartCounted(PEOPLE.length);
  // One send per note, and one read: the catch-up's, none looking for a note.
  expect(start).toEqual({ reads: 1, sends: PEOPLE.length });
});

it.each([
  ["made, its answer lost", true],
  ["not made", false],
])(
  "a note whose send failed with a 5xx (%s) is looked for at the start and said exactly once",
  async (_, made) => {
    const bot = await asked();
    const id = bot.dialogs()[0]!.id;
    up!.sandbox.control.failNext(1, {
      status: 502,
      methods: ["POST"],
      paths: ["/messages"],
      ...(made ? { after: true as const } : {}),
    });
    await dialogDesk(up!.running.daemon.bots).endDialog("tally", id, NOTE);
    await expect
      .poll(() => up!.running.logged("could not tell the person their dialog ended"), { timeout: 15_000 })
      .toHaveLength(1);
    const start = await restartCounted(1);
    // The note looked for (reads besides the catch-up's), sent only when not found.
    expect(start.reads).toBeGreaterThan(1);
    expect(start.sends).toBe(made ? 0 : 1);
    expect(said().filter((s) => s === NOTE)).toHaveLength(1);
  },
);
