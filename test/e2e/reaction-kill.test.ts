/**
 * A reaction the daemon received, whose handler was still running when `bothost run` was killed
 * with SIGKILL after the next poll had acknowledged it on the server: the server never sends it
 * again, and a restart fetches only messages again. It was saved before that poll went out
 * (src/events/saved-events.ts), so the restart runs it once more: its handler finishes, and what
 * its first run sent (recorded) is not sent twice.
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { reactAs } from "../../src/testing/react-as.ts";
import { acknowledged, BOT, botSaid, gatedBot, useSelfKillingBots } from "../support/self-killing-bot.ts";

useSelfKillingBots();

const MEMBER = "member@sandbox.example";

/** The reaction's handler says it saw the reaction, waits at the gate (a file), then says it is done. */
const moduleText = (gate: string) => `import { existsSync } from "node:fs";
export default { setup(bot) {
  bot.on("reaction", { op: "add" }, async (ctx) => {
    const to = { type: "direct", to: [ctx.event.user_id] };
    await ctx.send({ ...to, content: "seen " + ctx.event.emoji_name });
    while (!existsSync(${JSON.stringify(gate)})) await new Promise((go) => setTimeout(go, 20));
    await ctx.send({ ...to, content: "done " + ctx.event.emoji_name });
  });
} };
`;

it("a reaction acknowledged on the server and cut by a kill -9 runs again after the restart, its replies sent once", {
  timeout: 60_000,
}, async () => {
  const { sandbox, start, gate } = await gatedBot(moduleText);
  const { control } = sandbox;
  const first = await start();
  const id = control.sendAs(MEMBER, { type: "direct", to: [BOT], content: "react to me" }).id;
  await reactAs(sandbox, MEMBER, id, "tada", false);
  // The handler is at its gate, and the poll after the reaction acknowledged it: the bot's queue
  // holds nothing, its next poll parked.
  await control.waitFor(() => botSaid(sandbox).includes("seen tada"));
  await acknowledged(sandbox);
  first.kill("SIGKILL");
  expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
  expect(botSaid(sandbox)).toEqual(["seen tada"]);

  await writeFile(gate, "");
  const again = await start();
  await control.waitFor(() => botSaid(sandbox).includes("done tada"));
  again.kill("SIGTERM");
  expect(await again.exited).toEqual({ code: 0, signal: null });
  expect(botSaid(sandbox)).toEqual(["seen tada", "done tada"]);
  expect(
    again.logs().some((l) => l.msg === "running again the events a stop or a kill left unfinished"),
  ).toBe(true);
  expect(existsSync(gate)).toBe(true);
});
