/**
 * A question with buttons sent, then the process stopped before its log was written (the store
 * refusing that write, as a kill -9 right after the send leaves it), and the bot down past the
 * prompt's deadline: the next start finds the question made and keeps it, its deadline counted
 * from when the question was sent. A press (or a typed choice) made while down, after that
 * deadline, is no answer: the prompt times out. Before, the deadline was counted anew from the
 * start that kept the question, so a request that had expired while the bot was down was decided
 * by a late press. The same holds for a refusal asking the question again: kept at a start, its
 * wait counts from its send. A real daemon in this process on the test clock against the sandbox
 * over HTTP; the store is a FileStore whose dialog writes pass a gate.
 */
import { afterEach, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { PromptError } from "../../src/pipeline/dialogs/prompt-error.ts";
import {
  closeGatedDaemon,
  type GatedDaemon,
  questionShown,
  restartPastStop,
  startGatedDaemon,
} from "../support/gated-daemon.ts";
import { StoreGate } from "../support/gated-store.ts";

const BOT = "deploy-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const QUESTION = "Deploy api 1.4.2?";

const deploys = defineBot({
  setup(bot) {
    bot.track("reactions");
    bot.command("deploy", async (ctx) => {
      try {
        const decision = await ctx.prompt(QUESTION, {
          choices: { approve: "check", reject: "cross_mark" },
          timeout: "1m",
        });
        await ctx.reply(`decided: ${decision.value}`);
      } catch (err) {
        if (!(err instanceof PromptError && err.code === "PROMPT_TIMEOUT")) throw err;
        await ctx.reply("expired");
      }
    });
  },
});

let up: GatedDaemon | undefined;
let gate = new StoreGate();
afterEach(async () => {
  gate.open();
  await closeGatedDaemon(up);
  up = undefined;
});

/** The bot on a gated daemon, its dialog writes passing a new gate. */
function start(): Promise<GatedDaemon> {
  gate = new StoreGate();
  return startGatedDaemon({
    name: "deploys",
    email: BOT,
    fullName: "Deploys",
    definition: deploys,
    extra: "handler_timeout: 1h",
    gate,
  });
}

/** The bot's messages (their first line), oldest first. */
function botSaid(): string[] {
  const { control } = up!.sandbox;
  const botId = control.users().find((u) => u.email === BOT)!.user_id;
  return control
    .messages()
    .filter((m) => m.sender_id === botId)
    .map((m) => String(m.content).split("\n")[0]!);
}

it.each<[string, (question: number) => Promise<unknown>, string[]]>([
  [
    "its button pressed",
    (question) =>
      createClient({
        url: up!.sandbox.url,
        email: MEMBER,
        apiKey: up!.sandbox.control.apiKeyOf(MEMBER),
      }).reactions.add(question, { emoji_name: "check" }),
    [],
  ],
  // An ordinary message, after the prompt's timeout branch.
  [
    "a choice typed",
    async () => up!.dm("approve"),
    ["I don't know the command `approve`. Say `help` for the list."],
  ],
])(
  "a question found made at a start, %s while down after its deadline: the prompt times out",
  async (_, answer, after) => {
    up = await start();
    gate.mode = "fail";
    up.dm("deploy");
    // Sent with its two buttons; its log's first write refused.
    const question = await questionShown(up, BOT, QUESTION);
    await gate.stoppedAt(1);
    await restartPastStop(up, async () => {
      // Down past the minute the question gave: the answer comes after its deadline.
      await up!.clock.advance(2 * 60_000);
      await answer(question);
      gate.open();
    });

    await expect.poll(botSaid, { timeout: 15_000 }).toEqual([QUESTION, "expired", ...after]);
  },
);

it("a question asked again after a refused answer, kept at a start: its deadline counts from its asking again", async () => {
  up = await start();
  up.dm("deploy");
  await questionShown(up, BOT, QUESTION);
  // Most of the minute gone, an answer that is no choice: it is recorded, the question is asked
  // again, and that turn's log write is refused.
  await up.clock.advance(50_000);
  gate.skip = 1;
  gate.mode = "fail";
  up.dm("maybe");
  await up.sandbox.control.waitFor(() => botSaid().length === 2);
  await gate.stoppedAt(1);
  await restartPastStop(up, async () => {
    // Down past the minute the question asked again gave: the choice comes after its deadline.
    await up!.clock.advance(2 * 60_000);
    up!.dm("approve");
    gate.open();
  });

  await expect
    .poll(botSaid, { timeout: 15_000 })
    .toEqual([
      QUESTION,
      expect.stringMatching(/^I could not use that/),
      "expired",
      "I don't know the command `approve`. Say `help` for the list.",
    ]);
});
