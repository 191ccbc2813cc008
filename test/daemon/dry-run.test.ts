/**
 * `dry_run: true` through a real daemon and sandbox: the bot reads and polls as usual, but every
 * write it would make (a reply, a report, a reaction) is captured, logged and shown in the status
 * (JSON, `bothost status` text, the /status page); the server receives none of them.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { formatStatus } from "../../src/cli/status.ts";
import type { DaemonStatus } from "../../src/http/daemon-status.ts";
import { FileStore } from "../../src/state/file-store.ts";
import type { InProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { freePort } from "../support/free-port.ts";
import { useSandbox } from "../support/sandbox-fixture.ts";

const MEMBER = "member@sandbox.example";
const BOT = "careful-bot@sandbox.example";

let running: InProcessDaemon | undefined;

const world = useSandbox({ bots: { [BOT]: "Careful" } });

const moderator = defineBot({
  setup(bot) {
    bot.on("message", { sender: MEMBER }, async (ctx) => {
      const m = ctx.event.message;
      if (!m.content.includes("spam")) return;
      await ctx.api.reactions.add(m.id, { emoji_name: "warning" });
      await ctx.report(m.id, "spam", "looks like spam");
      await ctx.reply("Reported to the moderators.");
    });
  },
});

it("captures the bot's writes instead of making them, and the status shows them", async () => {
  const port = await freePort();
  running = await world.daemon(
    { careful: { email: BOT, definition: moderator, extra: "dry_run: true" } },
    { global: `http:\n  listen: 127.0.0.1:${port}` },
  );
  const id = world.sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "deals",
    content: "buy spam now",
  }).id;

  const status = async () =>
    (await (await fetch(`http://127.0.0.1:${port}/admin/status`)).json()) as DaemonStatus;
  await expect.poll(async () => (await status()).bots[0]?.dryRun?.captured, { timeout: 10_000 }).toBe(3);
  const bot = (await status()).bots[0]!;
  expect(bot.dryRun!.recent.map((c) => c.does)).toEqual([
    `react :warning: on message ${id}`,
    `report message ${id} as spam: "looks like spam"`,
    'send to #general > deals: "Reported to the moderators."',
  ]);

  // Nothing reached the server: no write by the bot beyond its own queue's.
  const writes = world.sandbox.control.requests.filter(
    (r) => r.email === BOT && r.method !== "GET" && r.path !== "/register" && r.path !== "/events",
  );
  expect(writes).toEqual([]);
  expect(world.messagesFrom(BOT)).toEqual([]);
  expect(running.logged("dry run: report message")).toHaveLength(1);

  const text = formatStatus(await status());
  expect(text).toContain(`careful: dry run, 3 write(s) captured, not made; latest:`);
  // Every capture the daemon keeps (the latest twenty) is listed, as on the page.
  const many = await status();
  const kept = Array.from({ length: 20 }, (_, i) => ({
    ...many.bots[0]!.dryRun!.recent[0]!,
    does: `write ${i}`,
  }));
  many.bots[0]!.dryRun!.recent = kept;
  expect(
    formatStatus(many)
      .split("\n")
      .filter((l) => /^ {2}\S+ {2}write \d+$/.test(l)),
  ).toHaveLength(20);
  // The budget line: the bot's calls this hour per bucket; light traffic, so polls go at once.
  expect(text).toMatch(
    /^careful: calls used this hour: event queue [1-9]\d*\/2000 \(\d+ left\), other [1-9]\d*\/2000 \(\d+ left\); polls at once$/m,
  );
  const page = await (await fetch(`http://127.0.0.1:${port}/status`)).text();
  expect(page).toContain("3 write(s) captured, not made");
  expect(page).toContain(`report message ${id} as spam: &#34;looks like spam&#34;`);
});

it("keeps no report claim: a report pretended in a dry run can be made once the dry run is off", async () => {
  const stateDir = await mkdtemp(join(tmpdir(), "bothost-dry-"));
  try {
    running = await world.daemon(
      { careful: { email: BOT, definition: moderator, extra: "dry_run: true" } },
      { stateDir },
    );
    world.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "a", content: "spam" });
    await expect.poll(() => running!.daemon.bots[0]!.captured?.count, { timeout: 10_000 }).toBe(3);
    await running.stop();
    running = undefined;
    const store = await FileStore.open(stateDir);
    try {
      expect(await store.namespace("careful").namespace("reports").list()).toEqual([]);
    } finally {
      await store.close();
    }
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
});
