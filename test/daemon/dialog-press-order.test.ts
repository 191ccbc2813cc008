/**
 * A button press and a typed answer to one question for others (`from`), in the server's order:
 * an approver types `reject` while the topic is busy (another message's handler still runs), then
 * another presses ✓. The typed answer came first and wins; the press is an ordinary reaction.
 * Before, a press on a question was ordered apart from the topic's messages (the bot's own
 * messages are not remembered with their conversation, and nothing is after a start), so it ran
 * at once and the later press decided. Live, and after a restart. And what the guide says of a
 * press made while the bot was down, the deadline passing before it came back: it decides nothing
 * (a typed choice made then does). And a new request sent there while the bot was down, after
 * the question's deadline: the question times out first and the request is asked. Before, the
 * caught-up request ran first and was refused with PROMPT_PENDING, the question timing out after
 * it. A real daemon in this process on the test clock against the sandbox over HTTP.
 */
import { afterEach, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { deferred } from "../support/deferred.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";

const BOT = "deploy-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";
const ADA = "ada@sandbox.example";
const QUESTION = "Deploy api 1.4.2?";

/** Who may decide (set once the users exist). */
const approvers: number[] = [];
/** Holds the handler of an ordinary `slow` message; `entered` once it runs. */
let slow = deferred();
let entered = deferred();
/** The reactions the bot's handlers got as ordinary events (its buttons' too). */
const ordinary: string[] = [];

const deploys = defineBot({
  setup(bot) {
    bot.track("reactions");
    bot.command("deploy", async (ctx) => {
      const decision = await ctx.prompt(QUESTION, {
        from: approvers,
        except: [ctx.sender.id],
        choices: { approve: "check", reject: "cross_mark" },
      });
      await ctx.reply(`${decision.value} by ${decision.by.name}`);
    });
    bot.on("reaction", (ctx) => {
      ordinary.push(`${ctx.event.emoji_name} by user ${ctx.event.user_id}`);
    });
    bot.on("message", async (ctx) => {
      if (ctx.text !== "slow") return;
      entered.resolve();
      await slow.promise;
      await ctx.reply("slow: done");
    });
  },
});

const DAEMON = { name: "deploys", email: BOT, fullName: "Deploys", channels: ["general"] };
let up: GatedDaemon | undefined;
afterEach(() => {
  slow.resolve();
  return closeGatedDaemon(up);
});

/** Presses `emoji` on message `id` as `email`, through the server's route. */
const press = (email: string, id: number, emoji: string) =>
  createClient({ url: up!.sandbox.url, email, apiKey: up!.sandbox.control.apiKeyOf(email) }).reactions.add(
    id,
    { emoji_name: emoji },
  );
const say = (email: string, content: string) =>
  up!.sandbox.control.sendAs(email, { type: "stream", to: "general", topic: "deploys", content });
const userId = (email: string) => up!.sandbox.control.users().find((u) => u.email === email)!.user_id;

/** The bot's messages (their first line), oldest first. */
const botSaid = () =>
  up!.sandbox.control
    .messages()
    .filter((m) => m.sender_id === userId(BOT))
    .map((m) => String(m.content).split("\n")[0]);

/** The daemon up, and the request's question asked, with both its buttons, waiting (its log kept): its id. */
async function asked(): Promise<number> {
  [slow, entered] = [deferred(), deferred()];
  ordinary.length = 0;
  up = await startGatedDaemon({ ...DAEMON, definition: deploys });
  const { control } = up.sandbox;
  control.createUser({ email: ADA, full_name: "Ada Approver", channels: ["general"] });
  approvers.splice(0, approvers.length, userId(OWNER), userId(ADA));
  say(MEMBER, "@**Deploys** deploy");
  const question = await control.waitFor(() => {
    const m = control.messages().find((x) => x.sender_id === userId(BOT));
    const buttons = (control.messageView(Number(m?.id))?.reactions ?? []) as { user_id: number }[];
    return buttons.filter((r) => r.user_id === userId(BOT)).length === 2 && Number(m!.id);
  });
  await expect
    .poll(() => up!.running.daemon.bots[0]!.dialogs().map((d) => d.deadline !== undefined))
    .toEqual([true]);
  return question;
}

/** The reactions the bot's handlers got as ordinary events, but its buttons. */
const others = () => ordinary.filter((r) => !r.endsWith(`user ${userId(BOT)}`));

it.each([
  ["live", false],
  ["after a restart", true],
])("a typed answer before a press wins, the topic busy (%s)", async (_, restart) => {
  const question = await asked();
  const running = restart ? await up!.restart() : up!.running;

  say(OWNER, "slow");
  await entered.promise;
  const received = running.daemon.bots[0]!.stats.received;
  say(ADA, "reject");
  await press(OWNER, question, "check");
  // Both reached the bot, behind the handler still running in the topic.
  await expect.poll(() => running.daemon.bots[0]!.stats.received).toBe(received + 2);
  slow.resolve();

  await expect.poll(others, { timeout: 15_000 }).toEqual([`check by user ${userId(OWNER)}`]);
  await expect.poll(() => running.daemon.bots[0]!.dialogs()).toEqual([]);
  expect(botSaid()).toEqual([QUESTION, "slow: done", "reject by Ada Approver"]);
});

it.each([
  ["a press", "check", undefined],
  ["a typed choice", undefined, "reject by Ada Approver"],
])(
  "%s made in time while the bot was down, its deadline passed when it came back: the question timed out unless typed",
  async (_, emoji, decided) => {
    const question = await asked();
    const running = await up!.restart(async () => {
      await up!.clock.advance(30 * 60_000);
      if (emoji !== undefined) await press(OWNER, question, emoji);
      else say(ADA, "reject");
      // Past the prompt's deadline (1 h).
      await up!.clock.advance(31 * 60_000);
    });
    await expect.poll(() => running.daemon.bots[0]!.dialogs(), { timeout: 15_000 }).toEqual([]);
    // The server keeps no time for a reaction: the dialog ended at its deadline, undecided.
    await expect.poll(botSaid).toEqual(decided === undefined ? [QUESTION] : [QUESTION, decided]);
  },
);

it("a new request sent while the bot was down, after the waiting question's deadline: the question times out first, the request is asked", async () => {
  await asked();
  const running = await up!.restart(async () => {
    // Past the prompt's deadline (1 h), then a new request in the topic.
    await up!.clock.advance(61 * 60_000);
    say(ADA, "@**Deploys** deploy");
  });
  // The first question timed out (its deadline came before the request); the request waits.
  await expect.poll(botSaid, { timeout: 15_000 }).toEqual([QUESTION, QUESTION]);
  await expect.poll(() => running.daemon.bots[0]!.dialogs().map((d) => d.userName)).toEqual(["Ada Approver"]);
});
