/**
 * A dialog's question sent, then `bothost run` killed (crash point `question-sent`: the server has
 * the message, the send's record is still pending and the dialog's log has no entry of it), then
 * started again with the question reworded (no `id`): the run finds the question it sent (by the
 * wording its pending record was given), sends no second one, puts the buttons on the one the
 * person sees, and a press on it answers the dialog.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { crashBackends } from "../support/crash-backends.ts";
import { setUpDialogDaemon } from "../support/dialog-daemon.ts";
import { botEmail, botSaid, MEMBER, sayToBot, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const fileStore = (await crashBackends("dialog-reworded-crash"))[0]![1];

const SHIP = `export default {
  events: ["message"],
  setup(bot) {
    bot.command("ship", async (ctx) => {
      const go = await ctx.prompt("Ship it?", { choices: { yes: "check", no: "cross_mark" }, timeout: "1h" });
      await ctx.reply(\`answer: \${go.value}\`);
    });
    bot.command("ping", (ctx) => ctx.reply(\`pong \${process.pid}\`));
  },
};
`;
const asked = (q: string) => `${q}\n1. :check: yes\n2. :cross_mark: no`;

it("killed right after the question's send, started with the question reworded: one question, its button answers", {
  timeout: 60_000,
}, async () => {
  const { sandbox, start, dir } = await setUpDialogDaemon(fileStore, "$DIR/ship.mjs");
  const module = path.join(dir, "ship.mjs");
  await writeFile(module, SHIP);
  const armed = await start({ BOTHOST_FAILPOINTS: "question-sent@1" });
  sayToBot(sandbox, "ship");
  expect(await armed.exited).toEqual({ code: null, signal: "SIGKILL" });
  expect(botSaid(sandbox)).toEqual([asked("Ship it?")]);

  await writeFile(module, (await readFile(module, "utf8")).replace('"Ship it?"', '"Ship the release now?"'));
  const daemon = await start();
  const { control } = sandbox;
  const botId = control.users().find((u) => u.email === botEmail(0))!.user_id;
  const first = Number(control.messages().find((m) => m.sender_id === botId)!.id);
  // The question already sent gets its buttons; none other is sent.
  const buttons = () =>
    ((control.messageView(first)?.reactions ?? []) as Array<{ user_id: number }>).filter(
      (r) => r.user_id === botId,
    ).length;
  await expect
    .poll(() => ({ said: botSaid(sandbox), buttons: buttons() }), { timeout: 15_000 })
    .toEqual({ said: [asked("Ship it?")], buttons: 2 });

  const member = createClient({ url: sandbox.url, email: MEMBER, apiKey: control.apiKeyOf(MEMBER) });
  await member.reactions.add(first, { emoji_name: "check" });
  await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual([asked("Ship it?"), "answer: yes"]);
  daemon.kill("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
});

/**
 * The same crash, then a start whose code makes another send where the question was: it is not
 * that question reworded (another `id`, or no question at all), so the question the person sees
 * is not taken for it; the new send is made.
 */
async function replacedAfterCrash(replace: (code: string) => string, said: string) {
  const { sandbox, start, dir } = await setUpDialogDaemon(fileStore, "$DIR/ship.mjs");
  const module = path.join(dir, "ship.mjs");
  await writeFile(module, SHIP.replace('timeout: "1h" }', 'timeout: "1h", id: "ship" }'));
  const armed = await start({ BOTHOST_FAILPOINTS: "question-sent@1" });
  sayToBot(sandbox, "ship");
  expect(await armed.exited).toEqual({ code: null, signal: "SIGKILL" });
  expect(botSaid(sandbox)).toEqual([asked("Ship it?")]);
  await writeFile(module, replace(await readFile(module, "utf8")));
  const daemon = await start();
  await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual([asked("Ship it?"), said]);
  daemon.kill("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
}

it("killed right after the question's send, started with another question (another id) there: that one is sent", {
  timeout: 60_000,
}, async () => {
  await replacedAfterCrash(
    (code) => code.replace('"Ship it?"', '"Which environment?"').replace('id: "ship"', 'id: "env"'),
    asked("Which environment?"),
  );
});

it("killed right after the question's send, started with a plain reply in its place: the reply is sent", {
  timeout: 60_000,
}, async () => {
  await replacedAfterCrash(
    (code) =>
      code.replace(
        /const go = await ctx\.prompt\([^;]*\);\n\s*await ctx\.reply\([^;]*\);/,
        'await ctx.reply("Shipping is paused.");',
      ),
    "Shipping is paused.",
  );
});
