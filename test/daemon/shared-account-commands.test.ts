/**
 * Bots with commands that sign in as one account answer as one: each runs its own commands, a
 * command another bot of the account knows is left to that bot, a likely typo gets one "I don't
 * know the command" (from the first of them in the config, naming the closest command of any),
 * a word close to no command gets none (it may be another bot's: here the answer to a dialog's
 * question), and `help` comes once, listing every bot's commands. A reload that removes one of the
 * bots leaves the other answering alone, as a bot alone on its account does.
 */
import { readFile, writeFile } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { type Booted, bootDaemon } from "../../src/daemon/boot.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import {
  botEmail,
  botSaid,
  orgWithBots,
  sayToBot,
  startE2eSandbox,
  useE2eCleanup,
  writeConfig,
} from "../support/e2e-daemon.ts";
import { useModuleFiles } from "./module-files.ts";

useE2eCleanup();
let booted: Booted | undefined;
afterEach(async () => {
  await booted?.stop();
  booted = undefined;
});

/**
 * A module with one command `name` answering "<name> done" (and `extra` in its setup), and a
 * handler after it answering the message "barrier" with "<name> at barrier": messages of one
 * conversation are handled in order, so once each bot said it, each has handled everything said
 * before.
 */
const moduleWith = (name: string, extra = "") =>
  `export default { setup(bot) {
  bot.command("${name}", { description: "does ${name}" }, (ctx) => ctx.reply("${name} done"));
  ${extra}
  bot.on("message", (ctx) => ctx.event.message.content === "barrier", (ctx) => ctx.reply("${name} at barrier"));
} };\n`;

/** The second bot also asks a question, whose answer is no command of either bot. */
const COUNT = `bot.command("count", { description: "asks how many" }, async (ctx) => {
    const n = await ctx.prompt("How many?");
    await ctx.reply("counted " + n.text);
  });`;

async function boot(): Promise<{ sandbox: Sandbox; file: (name: string) => string; configFile: string }> {
  const sandbox = await startE2eSandbox(orgWithBots(1));
  const config = await writeConfig(sandbox, { order: { email: botEmail(0) }, boom: { email: botEmail(0) } });
  const file = await useModuleFiles(config, { order: moduleWith("order"), boom: moduleWith("boom", COUNT) });
  Object.assign(process.env, config.env);
  booted = await bootDaemon(config.file, { logLevel: "warn", logDestination: { write: () => {} } });
  await booted.daemon.start();
  return { sandbox, file, configFile: config.file };
}

/** Say each text to the account, then the barrier; what the account said in answer, sorted. */
async function answersTo(sandbox: Sandbox, texts: string[], barrier: string[]): Promise<string[]> {
  const before = botSaid(sandbox).length;
  for (const text of [...texts, "barrier"]) sayToBot(sandbox, text);
  const said = () => botSaid(sandbox).slice(before);
  await expect
    .poll(
      () =>
        said()
          .filter((s) => s.endsWith(" at barrier"))
          .sort(),
      { timeout: 15_000 },
    )
    .toEqual(barrier);
  return said()
    .filter((s) => !s.endsWith(" at barrier"))
    .sort();
}

it("two bots with commands on one account answer each command once, and help once for both", async () => {
  const { sandbox } = await boot();
  const said = await answersTo(
    sandbox,
    ["boom", "order", "help", "ordr", "nope"],
    ["boom at barrier", "order at barrier"],
  );
  expect(said.filter((s) => s === "boom done" || s === "order done")).toEqual(["boom done", "order done"]);
  const help = said.filter((s) => s.includes("does boom") || s.includes("does order"));
  expect(help).toHaveLength(1);
  expect(help[0]).toContain("does boom");
  expect(help[0]).toContain("asks how many");
  expect(help[0]).toContain("does order");
  // A typo of a command is answered once; a word close to none (it may be the other bot's) not at all.
  expect(said.filter((s) => s.startsWith("I don't know the command"))).toEqual([
    "I don't know the command `ordr`. Did you mean `order`? Say `help` for the list.",
  ]);
  expect(said).toHaveLength(4);
});

it("the answer to one bot's question gets no unknown-command reply from the other", async () => {
  const { sandbox } = await boot();
  const asked = await answersTo(sandbox, ["count"], ["boom at barrier", "order at barrier"]);
  expect(asked).toEqual(["How many?"]);
  // The answer and then the barrier: the dialog takes "3", the barrier goes to the handlers.
  const said = await answersTo(sandbox, ["3"], ["boom at barrier", "order at barrier"]);
  expect(said).toEqual(["counted 3"]);
});

it("a reload that removes one of them leaves the other answering alone", async () => {
  const { sandbox, configFile } = await boot();
  const text = await readFile(configFile, "utf8");
  const withoutOrder = text.replace(/\n {2}order:\n(?: {4}[^\n]*\n)+/, "\n");
  expect(withoutOrder).not.toContain("order.mjs");
  await writeFile(configFile, withoutOrder);
  expect(await booted!.daemon.reload()).toMatchObject({ remove: ["order"] });

  const said = await answersTo(sandbox, ["order", "help"], ["boom at barrier"]);
  expect(said).toHaveLength(2);
  expect(said).toContain("I don't know the command `order`. Say `help` for the list.");
  const help = said.find((s) => s.startsWith("Commands"));
  expect(help).toContain("does boom");
  expect(help).not.toContain("does order");
});
