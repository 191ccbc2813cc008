/**
 * Dialogs and the stop of a bot, as a failover brings it about: a dead letter of a dialog's first
 * message, replayed after the dialog went on without it (a stop that cut the first run can keep
 * it as a letter although its question's log landed), finds the dialog begun and is done; and a
 * dialog's run that failed and was waiting to run again when the bot stopped is not kept as a
 * letter (which would end the dialog) but runs from its log at the next start. Real daemon,
 * sandbox over HTTP.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { DialogLog } from "../../src/pipeline/dialogs/dialog-log.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import type { JsonValue } from "../../src/state/state-store.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { crashBackends } from "../support/crash-backends.ts";

const BOT = "order-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
/** The next run past the first answer throws (as a write refused by a store out of reach). */
let failNext = false;
const order = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      const size = await ctx.prompt("Which size?");
      if (failNext) {
        failNext = false;
        throw new Error("the store is out of reach");
      }
      const count = await ctx.prompt("How many?");
      await ctx.reply(`${count.text} x ${size.text}`);
    });
  },
});

let sandbox: Sandbox | undefined;
let running: InProcessDaemon | undefined;
let dir: string | undefined;
afterEach(async () => {
  await running?.stop();
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A sandbox with the order bot's account, and a directory for its state. */
async function orderBotUp(): Promise<{ sandbox: Sandbox; dir: string }> {
  const box = await startSandbox();
  box.control.createUser({ email: BOT, full_name: "Order", bot: "generic", owner: "owner@sandbox.example" });
  return { sandbox: box, dir: await mkdtemp(join(tmpdir(), "bothost-dialog-letters-")) };
}

/** What the bot said in the sandbox so far, and a direct message to it from the member. */
function talk(sb: Sandbox) {
  const botId = sb.control.users().find((u) => u.email === BOT)!.user_id;
  const botSaid = () =>
    sb.control
      .messages()
      .filter((m) => m.sender_id === botId)
      .map((m) => String(m.content));
  const dm = (content: string) => sb.control.sendAs(MEMBER, { type: "direct", to: [BOT], content });
  return { botSaid, dm };
}

it("a replayed letter of a dialog's first message leaves the dialog, begun since, to go on", async () => {
  ({ sandbox, dir } = await orderBotUp());
  const store = await FileStore.open(dir);
  running = await startInProcessDaemon(sandbox, { order: { email: BOT, definition: order } }, { store });
  const { botSaid, dm } = talk(sandbox);

  dm("order");
  await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?"]);
  dm("large");
  await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?", "How many?"]);

  // The first run's event, as its dialog's log keeps it, kept as a letter and replayed now.
  const log = new DialogLog(store.namespace("order").namespace("dialogs"), async () => {});
  const [head] = await log.heads();
  const { origin } = await log.read(head!);
  const letters = running.daemon.letters.of("order");
  const at = new Date().toISOString();
  const letter = await letters.add({
    source: "queue",
    event: origin as JsonValue,
    error: new Error("the bot is shutting down"),
    attempts: 1,
    firstFailedAt: at,
    lastFailedAt: at,
  });
  await running.daemon.letters.retry({ ids: [letter.id] });
  await expect.poll(() => letters.list(), { timeout: 10_000 }).toEqual([]);

  dm("2");
  await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?", "How many?", "2 x large"]);
});

it("a dialog's run waiting to run again when the bot stops runs from its log at the next start", async () => {
  ({ sandbox, dir } = await orderBotUp());
  // The pause before a failed run's next attempt outlasts the test: the stop comes within it.
  const bots = { order: { email: BOT, definition: order, extra: "retries:\n  backoff: 1h" } };
  running = await startInProcessDaemon(sandbox, bots, { store: await FileStore.open(dir) });
  const { botSaid, dm } = talk(sandbox);

  dm("order");
  await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?"]);
  failNext = true;
  dm("large");
  const paused = () => running!.logged("handler failed; running it again after a pause").length;
  await expect.poll(paused, { timeout: 10_000 }).toBe(1);
  await running.stop();

  running = await startInProcessDaemon(sandbox, bots, { store: await FileStore.open(dir) });
  await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?", "How many?"]);
  dm("2");
  await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?", "How many?", "2 x large"]);
  expect(await running.daemon.letters.list()).toEqual([]);
});

const stores = await crashBackends("dialog-letters");
describe.each(stores)("on the %s", (_, backendFor) => {
  it.each([
    ["the same daemon", false],
    ["a daemon started again", true],
  ])("a dialog's run kept as a dead letter goes on when %s retries the letter", async (_, restart) => {
    ({ sandbox, dir } = await orderBotUp());
    const bots = { order: { email: BOT, definition: order, extra: "retries:\n  attempts: 1" } };
    const backend = backendFor(dir);
    const up = async () => startInProcessDaemon(sandbox!, bots, { store: await backend.open() });
    running = await up();
    const { botSaid, dm } = talk(sandbox);

    dm("order");
    await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?"]);
    failNext = true;
    dm("large");
    const letters = () => running!.daemon.letters.of("order").list();
    await expect.poll(letters, { timeout: 10_000 }).toHaveLength(1);
    // Ended while its letter is kept (its end is written after the letter): the person's
    // messages meanwhile are ordinary.
    await expect.poll(() => running!.daemon.bots[0]!.dialogs(), { timeout: 10_000 }).toEqual([]);
    if (restart) {
      await running.stop();
      running = await up();
    }

    const [letter] = await letters();
    await running.daemon.letters.retry({ ids: [letter!.id] });
    await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?", "How many?"]);
    await expect.poll(letters, { timeout: 10_000 }).toEqual([]);
    expect(running.daemon.bots[0]!.dialogs()).toMatchObject([{ step: 2 }]);
    dm("2");
    await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?", "How many?", "2 x large"]);
    // Its end is written after its last reply.
    await expect.poll(() => running!.daemon.bots[0]!.dialogs(), { timeout: 10_000 }).toEqual([]);
  });
});
