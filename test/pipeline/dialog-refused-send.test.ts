/**
 * A dialog's send the server refused (a channel that does not exist), caught by its handler: it
 * was not made, so the dialog's log keeps no record of it, and each replay of the dialog (at its
 * answer) makes it anew, refused again for its own reason, with no read-back of the bot's
 * messages (which the server would refuse too: its narrow names that channel). Real daemon,
 * sandbox over HTTP.
 */
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { DialogLog } from "../../src/pipeline/dialogs/dialog-log.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const BOT = "order-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const world = useSandbox({ bots: { [BOT]: "Order" } });

/** What each run's send to the channel that does not exist failed with. */
const failures: string[] = [];
afterEach(() => {
  failures.length = 0;
});
const order = defineBot({
  setup(bot) {
    bot.command("order", async (ctx) => {
      await ctx
        .send({ type: "channel", to: "nowhere", topic: "orders", content: "a new order" })
        .catch((err: { code?: string }) => failures.push(String(err.code)));
      const size = await ctx.prompt("Which size?");
      await ctx.reply(`ok: ${size.text}`);
    });
  },
});

it("a send refused in a dialog's turn is not in its log, and is made anew at the answer with no read-back", async () => {
  const store = new MemoryStore();
  await world.daemon({ order: { email: BOT, definition: order } }, { store });
  const { control } = world.sandbox;
  const botSaid = () => world.messagesFrom(BOT).map((m) => String(m.content));
  const dm = (content: string) => control.sendAs(MEMBER, { type: "direct", to: [BOT], content });
  const bot = (method: string, path: string) =>
    control.requests.filter((r) => r.method === method && r.path === path && r.email === BOT);

  dm("order");
  await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?"]);
  // The log keeps the question's send alone: the refused one was not made. The question shows
  // before its log is written: the header is waited for.
  const log = new DialogLog(store.namespace("order").namespace("dialogs"), async () => {});
  await expect.poll(async () => (await log.heads()).length, { timeout: 10_000 }).toBe(1);
  const [head] = await log.heads();
  const { effects } = await log.read(head!);
  expect(effects).toMatchObject([{ n: 2, kind: "send", result: { id: expect.any(Number) } }]);
  expect(effects).not.toContainEqual(expect.objectContaining({ pending: true }));

  const reads = bot("GET", "/messages").length;
  dm("large");
  await expect.poll(botSaid, { timeout: 10_000 }).toEqual(["Which size?", "ok: large"]);
  expect(failures).toEqual(["STREAM_DOES_NOT_EXIST", "STREAM_DOES_NOT_EXIST"]);
  expect(bot("POST", "/messages").map((r) => r.status)).toEqual([400, 200, 400, 200]);
  // No read-back of the refused send: it would narrow to the channel that does not exist, which
  // the server refuses (400). A read of the bot's own waiting question after a new queue (a poll
  // taken for hung on a loaded machine) is no read-back of it, and is answered.
  expect(
    bot("GET", "/messages")
      .slice(reads)
      .filter((r) => r.status !== 200),
  ).toEqual([]);
});
