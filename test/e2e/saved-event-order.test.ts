/**
 * A saved event run again after a kill -9 keeps its place among the messages caught up: a reaction
 * on a message whose run the kill cut (the message not marked handled, so caught up again) runs
 * after that message, as it did the first time, not before it.
 */
import { writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { reactAs } from "../../src/testing/react-as.ts";
import { acknowledged, BOT, botSaid, gatedBot, useSelfKillingBots } from "../support/self-killing-bot.ts";

useSelfKillingBots();

const MEMBER = "member@sandbox.example";

/** "open" keeps a ticket for its message (once a gate file exists); a reaction on it closes it. */
const moduleText = (gate: string) => `import { existsSync } from "node:fs";
export default { setup(bot) {
  bot.on("message", async (ctx) => {
    if (ctx.event.message.content !== "open") return;
    await ctx.reply("opening");
    while (!existsSync(${JSON.stringify(gate)})) await new Promise((go) => setTimeout(go, 20));
    await ctx.state.set("ticket:" + ctx.event.message.id, "open");
  });
  bot.on("reaction", { op: "add" }, async (ctx) => {
    const ticket = await ctx.state.get("ticket:" + ctx.event.message_id);
    await ctx.send({ type: "direct", to: [ctx.event.user_id], content: (ticket ? "closed " : "no ticket ") + ctx.event.message_id });
  });
} };
`;

it("a reaction saved behind a message the kill cut runs again after that message, not before", {
  timeout: 60_000,
}, async () => {
  const { sandbox, start, gate } = await gatedBot(moduleText);
  const { control } = sandbox;
  const first = await start();
  const id = control.sendAs(MEMBER, { type: "direct", to: [BOT], content: "open" }).id;
  await control.waitFor(() => botSaid(sandbox).includes("opening"));
  // The reaction waits behind the message's run in their conversation, saved and acknowledged.
  await reactAs(sandbox, MEMBER, id, "check", false);
  await acknowledged(sandbox);
  first.kill("SIGKILL");
  await first.exited;
  expect(botSaid(sandbox)).toEqual(["opening"]);

  await writeFile(gate, "");
  const again = await start();
  await control.waitFor(() => botSaid(sandbox).length === 2);
  again.kill("SIGTERM");
  await again.exited;
  expect(botSaid(sandbox)).toEqual(["opening", `closed ${id}`]);
});
