/**
 * A dialog's run (and a message's first run) cut off at the deadline of a real `bothost run`'s
 * stop says where it runs again: cut by a reload that restarts the bot, "in the reloaded bot"
 * (whose new version runs it as it starts, asking the next question, or catches the message up);
 * cut by the daemon's stop, "at the next start". A failed run waiting to run again, cut by a reload,
 * is kept for replay "in the reloaded bot".
 */
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { runCli } from "../support/cli.ts";
import { crashBackends } from "../support/crash-backends.ts";
import { QUESTIONS, setUpDialogDaemon } from "../support/dialog-daemon.ts";
import { botSaid, sayToBot, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();

const [[, fileStore]] = (await crashBackends("dialog-cut-by-reload")) as [[string, never]];

/** The standup dialog, its run after the first answer held while `$HOLD` exists, or until its signal aborts. */
const heldBot = `import { existsSync } from "node:fs";
export default { events: ["message"], setup(bot) {
  bot.command("standup", async (ctx) => {
    const first = (await ctx.prompt(${JSON.stringify(QUESTIONS[0])}, { timeout: "1h" })).text;
    await new Promise((resolve) => {
      const poll = setInterval(() => existsSync(process.env.HOLD) || resolve(clearInterval(poll)), 50);
      ctx.signal.addEventListener("abort", () => resolve(clearInterval(poll)));
    });
    ctx.signal.throwIfAborted();
    await ctx.prompt(${JSON.stringify(QUESTIONS[1])}, { timeout: "1h" });
    await ctx.reply("done " + first);
  });
} };
`;

const CUT = "a dialog's run was cut off by the stop: it runs again";

/** `shutdown_timeout`: a held run is cut once it passed, at a reload and at the stop alike. */
const CUT_AFTER = "1s";

it("cut by a reload: runs again in the reloaded bot; cut by the stop: at the next start", {
  timeout: 90_000,
}, async () => {
  const { sandbox, start, dir, file, key } = await setUpDialogDaemon(
    fileStore,
    "$DIR/held.mjs",
    "1h",
    {},
    CUT_AFTER,
  );
  await writeFile(path.join(dir, "held.mjs"), heldBot);
  const hold = path.join(dir, "hold");
  await writeFile(hold, "");
  const daemon = await start({ HOLD: hold });
  sayToBot(sandbox, "standup");
  await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 1));
  sayToBot(sandbox, "did a");

  // A changed setting restarts the bot: its old version's run, held, is cut at shutdown_timeout.
  const yaml = await readFile(file, "utf8");
  await writeFile(file, yaml.replace("handler_timeout: 1h", "handler_timeout: 2h"));
  const reload = await runCli(["reload", "--config", file], { env: key });
  expect(reload).toMatchObject({ code: 0, stdout: "Restarted: standup\n" });
  const cutByReload = await daemon.waitForLog((l) => String(l.msg).startsWith(CUT), 10_000);
  expect(cutByReload.msg).toBe(`${CUT} in the reloaded bot`);

  // The new version took the run up (held again): the daemon's stop cuts it too.
  daemon.kill("SIGTERM");
  expect((await daemon.exited).code).toBe(0);
  const cuts = daemon.logs().filter((l) => String(l.msg).startsWith(CUT));
  expect(cuts.map((l) => l.msg)).toEqual([`${CUT} in the reloaded bot`, `${CUT} at the next start`]);
  expect(botSaid(sandbox)).toEqual(QUESTIONS.slice(0, 1));

  // Let go, the next start runs it: the second question, once.
  await rm(hold);
  const again = await start({ HOLD: hold });
  await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(QUESTIONS.slice(0, 2));
  again.kill("SIGTERM");
  expect((await again.exited).code).toBe(0);
  expect(existsSync(hold)).toBe(false);
});

/** A plain handler, held while `$HOLD` exists, or until its signal aborts; then it answers. */
const heldMessageBot = `import { existsSync, writeFileSync } from "node:fs";
export default { events: ["message"], setup(bot) {
  bot.on("message", async (ctx) => {
    writeFileSync(process.env.HOLD + ".began", "");
    await new Promise((resolve) => {
      const poll = setInterval(() => existsSync(process.env.HOLD) || resolve(clearInterval(poll)), 50);
      ctx.signal.addEventListener("abort", () => resolve(clearInterval(poll)));
    });
    ctx.signal.throwIfAborted();
    await ctx.reply("got " + ctx.event.message.content);
  });
} };
`;

const MESSAGE_CUT = "a message's run was cut off by the stop: it runs again";

it("a message's first run cut by a reload: the reloaded bot runs it, once", { timeout: 90_000 }, async () => {
  const { sandbox, start, dir, file, key } = await setUpDialogDaemon(
    fileStore,
    "$DIR/held.mjs",
    "1h",
    {},
    CUT_AFTER,
  );
  await writeFile(path.join(dir, "held.mjs"), heldMessageBot);
  const hold = path.join(dir, "hold");
  await writeFile(hold, "");
  const daemon = await start({ HOLD: hold });
  sayToBot(sandbox, "one");
  await expect.poll(() => existsSync(`${hold}.began`), { timeout: 15_000 }).toBe(true);

  const yaml = await readFile(file, "utf8");
  await writeFile(file, yaml.replace("handler_timeout: 1h", "handler_timeout: 2h"));
  const reload = await runCli(["reload", "--config", file], { env: key });
  expect(reload).toMatchObject({ code: 0, stdout: "Restarted: standup\n" });
  const cut = await daemon.waitForLog((l) => String(l.msg).startsWith(MESSAGE_CUT), 10_000);
  expect(cut.msg).toBe(`${MESSAGE_CUT} in the reloaded bot`);

  // Let go: the reloaded bot runs the message, once.
  await rm(hold);
  await rm(`${hold}.began`);
  await expect.poll(() => botSaid(sandbox), { timeout: 15_000 }).toEqual(["got one"]);
  daemon.kill("SIGTERM");
  expect((await daemon.exited).code).toBe(0);
  expect(botSaid(sandbox)).toEqual(["got one"]);
});

/** A plain handler that fails while `$FAIL` exists, else answers. */
const failingBot = `import { existsSync } from "node:fs";
export default { events: ["message"], setup(bot) {
  bot.on("message", async (ctx) => {
    if (existsSync(process.env.FAIL)) throw new Error("not yet");
    await ctx.reply("got " + ctx.event.message.content);
  });
} };
`;

const KEPT_CUT = "handler run cut by the bot's stop: kept for replay, it runs again";

it("a failed run waiting to run again, cut by a reload: the reloaded bot runs it, once", {
  timeout: 90_000,
}, async () => {
  const { sandbox, start, dir, file, key } = await setUpDialogDaemon(
    fileStore,
    "$DIR/failing.mjs",
    "1h",
    {},
    CUT_AFTER,
  );
  await writeFile(path.join(dir, "failing.mjs"), failingBot);
  const fail = path.join(dir, "fail");
  await writeFile(fail, "");
  const daemon = await start({ FAIL: fail });
  sayToBot(sandbox, "one");
  await daemon.waitForLog((l) => l.msg === "handler failed", 15_000);

  const yaml = await readFile(file, "utf8");
  await writeFile(file, yaml.replace("handler_timeout: 1h", "handler_timeout: 2h"));
  const reload = await runCli(["reload", "--config", file], { env: key });
  expect(reload).toMatchObject({ code: 0, stdout: "Restarted: standup\n" });
  const cut = await daemon.waitForLog((l) => String(l.msg).startsWith(KEPT_CUT), 10_000);
  expect(cut.msg).toBe(`${KEPT_CUT} in the reloaded bot`);

  // The reloaded bot replays the kept run once the handler no longer fails: answered once.
  await rm(fail);
  await expect.poll(() => botSaid(sandbox), { timeout: 30_000 }).toEqual(["got one"]);
  daemon.kill("SIGTERM");
  expect((await daemon.exited).code).toBe(0);
  expect(botSaid(sandbox)).toEqual(["got one"]);
});
