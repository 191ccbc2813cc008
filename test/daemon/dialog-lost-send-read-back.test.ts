/**
 * A dialog's send whose answer was lost (the server stored it, no echo came) and which the handler
 * let pass, asking on: its record stays pending in the dialog's log. When the person answers, the
 * dialog's replay looks for that send among the bot's messages in the conversation from the
 * dialog's first message on, however many the bot said there since: found, it is not made again.
 * A real daemon in this process on a held test clock against the sandbox over HTTP.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { ECHO_WAIT_MS } from "../../src/effects/local-echo.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { closeGatedDaemon, type GatedDaemon, startGatedDaemon } from "../support/gated-daemon.ts";

const BOT = "order-bot@sandbox.example";
const MEMBER = "member@sandbox.example";

const orders = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      // Its answer may be lost: the person is asked on all the same.
      await ctx.reply("Order received.").catch(() => undefined);
      const size = await ctx.prompt("Which size?", { timeout: "30d" });
      await ctx.reply(`${size.text}, noted.`);
    });
  },
});

let up: GatedDaemon | undefined;
afterEach(() => closeGatedDaemon(up));

const userId = (email: string) => up!.sandbox.control.users().find((u) => u.email === email)!.user_id;
/** The bot's messages, oldest first. */
const said = () =>
  up!.sandbox.control
    .messages()
    .filter((m) => m.sender_id === userId(BOT))
    .map((m) => String(m.content));

it("a dialog's send stored with its answer lost, then 25 more of the bot's messages there: the replay finds it, not made again", async () => {
  const clock = new TestClock({ held: true });
  up = await startGatedDaemon({ name: "orders", email: BOT, fullName: "Orders", definition: orders, clock });
  const { control } = up.sandbox;
  // The bot's poll waits: the command goes out on it, the polls after it are held.
  const parked = () => control.queues().some((q) => q.email === BOT && q.parked && q.pending_events === 0);
  await control.waitFor(parked, { timeoutMs: 15_000 });
  // The first send is stored and its answer lost (502); its echo is held with the bot's polls.
  control.failNext(1, { status: 502, after: true, paths: [/^\/messages$/], methods: ["POST"] });
  control.delay(600_000, { paths: [/^\/events$/] });
  up.dm("order");
  await control.waitFor(() => said().length === 1, { timeoutMs: 15_000 });
  await expect.poll(() => clock.pendingDelays(), { timeout: 15_000 }).toContain(ECHO_WAIT_MS);
  await clock.advance(ECHO_WAIT_MS);
  await control.waitFor(() => said().length === 2, { timeoutMs: 15_000 });
  control.delay(0);
  const bot = up.running.daemon.bots[0]!;
  await expect.poll(() => bot.dialogs().map((d) => d.deadline !== undefined)).toEqual([true]);
  // The conversation moves on: the bot says more there than a look at its newest messages covers.
  const later = Array.from({ length: 25 }, (_, i) => `Reminder ${i + 1}.`);
  for (const content of later) control.sendAs(BOT, { type: "direct", to: [MEMBER], content });
  up.dm("large");
  await control.waitFor(() => said().at(-1) === "large, noted.", { timeoutMs: 15_000 });
  expect(said()).toEqual(["Order received.", "Which size?", ...later, "large, noted."]);
});
