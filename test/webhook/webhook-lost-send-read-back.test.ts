/**
 * An inbound webhook's send whose answer was lost (a 502 after the server stored the message),
 * retried by its sender minutes later, after the bot posted many more messages in the same topic
 * (an alerts channel, busy with other deliveries): the retry's read-back finds the first attempt's
 * message, and the alert is posted once. The read-back goes back to the time the delivery was first
 * claimed, kept with its records, so a retry on another process (after a restart) finds it too.
 * A snippet is looked for among those created since then: an earlier request's snippet with the
 * same title and text is not taken for the retried one's.
 * The sandbox's clock runs 10 s behind the daemon's (the server stamps by its own clock).
 * A real daemon in this process on a held test clock against the sandbox over HTTP.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { request } from "undici";
import { afterAll, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { defineBot } from "../../src/bot/define-bot.ts";
import { FileStore } from "../../src/state/file-store.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const BOT = "alerts-bot@sandbox.example";
const SERVER_BEHIND_MS = 10_000;

/** The daemon's clock of the test running now; the sandbox's runs SERVER_BEHIND_MS behind it. */
let clock = new ManualClock(Date.now());
const world = useSandbox({ bots: { [BOT]: "Alerts" }, clock: { now: () => clock.now() - SERVER_BEHIND_MS } });

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** Posts each alert's text in #general > alerts; saves a snippet for each incident. */
const alerts = defineBot({
  setup(bot) {
    bot.webhook("alert", { verify: { type: "none" }, idempotencyHeader: "X-Id" }, async (ctx) => {
      const { text } = ctx.request.body as { text: string };
      await ctx.send({ type: "channel", to: "general", topic: "alerts", content: text });
    });
    // Saves the on-call note each incident: the same title and text every time.
    bot.webhook("incident", { verify: { type: "none" }, idempotencyHeader: "X-Id" }, async (ctx) => {
      await ctx.snippets.create("On call", "Page the DBA first.");
    });
  },
});

async function started(stateDir: string) {
  const store = await FileStore.open(stateDir, { now: () => clock.now() });
  const running: InProcessDaemon = await world.daemon(
    { alerts: { email: BOT, definition: alerts } },
    { clock, global: "http:\n  listen: 127.0.0.1:0", stateDir, store },
  );
  const url = running.daemon.http!.url!;
  return {
    running,
    post: async (id: string, text: string, hook = "alert") => {
      const res = await request(`${url}/webhooks/alerts/${hook}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-id": id },
        body: JSON.stringify({ text }),
      });
      await res.body.dump();
      return res.statusCode;
    },
  };
}

const said = () => world.messagesFrom(BOT).map((m) => String(m.content));

/** The bot's 25 other alerts in the topic, each its own delivery, a second apart. */
async function busyTopic(post: (id: string, text: string) => Promise<number>) {
  for (let i = 1; i <= 25; i++) {
    await clock.tick(1_000);
    expect(await post(`other-${i}`, `alert ${i}`)).toBe(200);
  }
}

it("a delivery whose send's answer was lost, retried 2 minutes and 25 alerts later: posted once", async () => {
  clock = new ManualClock(Date.now());
  const dir = dirs[dirs.push(await mkdtemp(path.join(tmpdir(), "bothost-alerts-"))) - 1]!;
  const { post } = await started(dir);
  world.sandbox.control.failNext(1, { status: 502, after: true, paths: [/^\/messages$/], methods: ["POST"] });
  expect(await post("d-1", "disk full on db-1")).toBe(500);
  await busyTopic(post);
  await clock.tick(2 * 60_000);
  expect(await post("d-1", "disk full on db-1")).toBe(200);
  expect(said().filter((s) => s === "disk full on db-1")).toHaveLength(1);
  expect(said()).toHaveLength(26);
});

it("the same, its retry handled by a new process (after a restart): posted once", async () => {
  clock = new ManualClock(Date.now());
  const dir = dirs[dirs.push(await mkdtemp(path.join(tmpdir(), "bothost-alerts-"))) - 1]!;
  const first = await started(dir);
  world.sandbox.control.failNext(1, { status: 502, after: true, paths: [/^\/messages$/], methods: ["POST"] });
  expect(await first.post("d-2", "disk full on db-2")).toBe(500);
  await busyTopic(first.post);
  await first.running.stop();
  await clock.tick(2 * 60_000);
  const second = await started(dir);
  expect(await second.post("d-2", "disk full on db-2")).toBe(200);
  expect(said().filter((s) => s === "disk full on db-2")).toHaveLength(1);
  expect(said()).toHaveLength(26);
});

it("an incident's snippet not saved (a 502 before the server acted), retried an hour after an earlier incident saved the same one: saved by the retry", async () => {
  clock = new ManualClock(Date.now());
  const dir = dirs[dirs.push(await mkdtemp(path.join(tmpdir(), "bothost-alerts-"))) - 1]!;
  const { post } = await started(dir);
  const { control, url } = world.sandbox;
  const asBot = createClient({ url, email: BOT, apiKey: control.apiKeyOf(BOT) });
  const snippets = async () => (await asBot.savedSnippets.list()).saved_snippets.map((s) => s.title);
  expect(await post("i-1", "", "incident")).toBe(200);
  await clock.tick(60 * 60_000);
  world.sandbox.control.failNext(1, { status: 502, paths: [/^\/saved_snippets$/], methods: ["POST"] });
  expect(await post("i-2", "", "incident")).toBe(500);
  await clock.tick(60_000);
  expect(await post("i-2", "", "incident")).toBe(200);
  expect(await snippets()).toEqual(["On call", "On call"]);
});
