/**
 * A read-back (GET /messages for the bot's own newest messages) is made only for a send that may
 * have happened with its answer lost: one whose effect record was begun and never finished. A
 * message caught up after a restart, whose handler never ran, is answered with no read-back; a
 * send whose answer was lost is read back once before it is made again. Counted in the sandbox's
 * request log.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "readback-bot@sandbox.example";
const world = useSandbox({ bots: { [BOT]: "Readback" } });
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Replies to messages that say "send"; others are only seen. */
const replier = defineBot({
  setup(bot) {
    bot.on("message", { sender: MEMBER }, async (ctx) => {
      if (ctx.event.message.content.startsWith("send")) await ctx.reply(`re: ${ctx.event.message.content}`);
    });
  },
});

const post = (content: string) =>
  world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content });
const messageReads = () =>
  world.sandbox.control.requests.filter(
    (r) => r.method === "GET" && r.path === "/messages" && r.email === BOT,
  ).length;
const replies = () => world.messagesFrom(BOT).map((m) => String(m.content));
const bots = { rb: { email: BOT, definition: replier, extra: "retries: { attempts: 3, backoff: 50ms }" } };

/** Stops the daemon, posts `contents` while it is down, starts it again: how many GET /messages the start made. */
async function catchUp(stateDir: string, contents: string[]): Promise<number> {
  const before = messageReads();
  for (const content of contents) post(content);
  const running = await world.daemon(bots, { stateDir });
  await expect.poll(() => running.daemon.bots[0]!.stats.handled, { timeout: 10_000 }).toBe(contents.length);
  const reads = messageReads() - before;
  await running.stop();
  return reads;
}

it("a catch-up of messages whose handler never began makes no read-back", async () => {
  const stateDir = await mkdtemp(path.join(tmpdir(), "bothost-readback-"));
  dirs.push(stateDir);
  await (await world.daemon(bots, { stateDir })).stop();
  // The same catch-up twice: first of messages the bot only sees, then of messages it answers.
  const quiet = await catchUp(stateDir, ["a", "b", "c"]);
  const answered = await catchUp(stateDir, ["send 1", "send 2", "send 3"]);
  expect(replies()).toEqual(["re: send 1", "re: send 2", "re: send 3"]);
  // The answers cost no read of the bot's messages beyond the catch-up's own fetches.
  expect(answered).toBe(quiet);
  expect(quiet).toBeGreaterThan(0);
});

it("a send whose answer was lost is read back once before it is made again", async () => {
  const running = await world.daemon(bots);
  // Refused before the server acts: no message, and no echo of one, so the handler fails and reruns.
  world.sandbox.control.failNext(1, { status: 503, paths: [/^\/messages$/] });
  const before = messageReads();
  post("send once");
  await expect.poll(replies, { timeout: 10_000 }).toEqual(["re: send once"]);
  expect(messageReads() - before).toBe(1);
  expect(running.logged("handler failed; running it again after a pause")).toHaveLength(1);
});
