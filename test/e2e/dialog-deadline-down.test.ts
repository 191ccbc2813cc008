/**
 * A prompt's deadline passes while `bothost run` is down (killed right after the question's log is
 * written), a message of the person's sent
 * meanwhile: at the next start the deadline's timer fires at once, and the message, caught up, is
 * matched by its server time: sent after the deadline, it is ordinary and comes after the
 * prompt's timeout branch; sent before, it is the answer.
 */
import { describe, expect, it } from "vitest";
import { botSaid, selfKillingBot, useSelfKillingBots } from "../support/self-killing-bot.ts";

useSelfKillingBots();

const MEMBER = "member@sandbox.example";

/** A prompt of 2 s in a channel topic; "late…" messages are answered as ordinary ones. */
const moduleText = () => `export default { events: ["message"], setup(bot) {
  bot.on("message", (ctx) => ctx.event.message.content === "ask", async (ctx) => {
    try {
      const a = await ctx.prompt("T1?", { timeout: "2s" });
      await ctx.reply("got " + a.text);
    } catch (err) {
      await ctx.reply("ended " + (err.code ?? err.name));
    }
  });
  bot.on("message", (ctx) => ctx.event.message.content.startsWith("late"), (ctx) =>
    ctx.reply("ordinary " + ctx.event.message.content));
} };
`;

const untilPast = async (at: number) => {
  while (Date.now() <= at) await new Promise((r) => setTimeout(r, at + 50 - Date.now()));
};

describe("a deadline passed while the bot was down", () => {
  it.each([
    [
      "after it: the timeout branch first, then the message as an ordinary one",
      true,
      ["T1?", "ended PROMPT_TIMEOUT", "ordinary late answer"],
    ],
    ["before it: the message is the answer", false, ["T1?", "got late answer"]],
  ])("a message sent %s", { timeout: 60_000 }, async (_, afterDeadline, expected) => {
    const { sandbox, start } = await selfKillingBot({
      moduleText,
      stateYaml: (dir) => `state:\n  path: ${dir}/state`,
    });
    const say = (content: string) =>
      sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "d1", content }).id;
    // Killed once the question's log is written (a kill at any moment before it, as when the
    // question appears, may leave the question unlogged and the dialog to be asked again).
    const first = await start({ BOTHOST_FAILPOINTS: "question-logged@1" });
    say("ask");
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(botSaid(sandbox)).toEqual(["T1?"]);
    const deadline = Number(sandbox.control.messages().at(-1)!.timestamp) * 1000 + 3_000;
    if (afterDeadline) await untilPast(deadline);
    say("late answer");
    await untilPast(deadline);
    const again = await start();
    await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(expected);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });
});
