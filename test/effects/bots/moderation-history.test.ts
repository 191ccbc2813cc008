/**
 * The moderation bot over the seeded history (test/support/moderation-history.ts): run live with
 * runBot, exactly the messages made to trip a rule are reported, each under its rules, direct
 * messages to the bot included, and every action lands where it says; backtested, the same
 * messages are found with no write request.
 * It imports "bothost", which resolves to dist/: run `npm run build` first (`npm test` does).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import moderation from "../../../bots/moderation.ts";
import { loadBots } from "../../../src/bot/load-bots.ts";
import { loadConfigWithSource } from "../../../src/config/load-config.ts";
import { backtest } from "../../../src/daemon/backtest.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../../src/testing/run-bot.ts";
import type { TestMessage } from "../../../src/testing/test-message.ts";
import { repoRoot } from "../../support/cli.ts";
import {
  type ModerationHistory,
  PEOPLE,
  reportedMessages,
  type SeededRule,
  seedModerationHistory,
} from "../../support/moderation-history.ts";

let sandbox: Sandbox | undefined;
let bot: TestBot | undefined;
let dir: string | undefined;

afterEach(async () => {
  await bot?.stop();
  bot = undefined;
  await sandbox?.stop();
  sandbox = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function start(): Promise<Sandbox> {
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  return sandbox;
}

/** Ids of every message that should be reported (each rule here reports), ascending. */
const allExpected = (h: ModerationHistory) =>
  [...new Set(Object.values(h.expected).flat())].sort((a, b) => a - b);

describe("the moderation bot live over the seeded history", () => {
  it("reports exactly the messages made to trip a rule, and each action lands where it says", async () => {
    const s = await start();
    const control = s.control;
    // The bot has fetched everything sent so far: its poll is parked again with nothing pending
    // (parking is not a state change waitFor hears of, so this looks every few milliseconds).
    const idle = () =>
      vi.waitFor(
        () => {
          const q = control.queues().find((q) => q.email === bot?.email);
          if (!q?.parked || q.pending_events > 0) throw new Error("the bot has not caught up");
        },
        { timeout: 10_000, interval: 2 },
      );
    // A live bot handles the conversations of one batch of events in parallel, so the rules that
    // look across conversations (cross_post, flood) could see them out of order and miss a trip:
    // the bot catches up before every message. A shorter history (the same scenes, 40 ordinary
    // messages) keeps that within the client's 200 requests a minute.
    const history = await seedModerationHistory(s, {
      beforeTraffic: async ({ bot: account, settings }) => {
        // One poll per message for 100+ messages would spend the burst of the default hourly
        // budget and then wait 2 s between polls, as against a real server: this account gets a
        // server rule ten times larger (as a server's per-user rules allow), and the bot's config
        // says so (rate_limit), so that its polls are not spaced to the default minute's 200 either.
        control.setUserRateLimit(account.email, [
          [60, 2_000],
          [3600, 20_000],
        ]);
        bot = await runBot(s, {
          bot: moderation,
          name: "moderation",
          email: account.email,
          settings,
          config: "rate_limit: { per_minute: 2000, per_hour: 20000 }",
        });
      },
      pace: idle,
      ordinary: 40,
    });
    expect(history.messageIds.length).toBeGreaterThanOrEqual(100);
    // One more link flood, by direct message: answered once everything before it was handled.
    const sentinel = bot!.post(PEOPLE.cleo.email, {
      type: "direct",
      to: [history.bot.email],
      content: "1 https://a.example 2 https://b.example 3 https://c.example 4 https://d.example",
    });
    const lastWord = await control.waitFor(() =>
      bot!.replies().find((m) => m.id > sentinel && /Cleo/.test(m.content)),
    );
    expect(lastWord.content).toBe("Please keep it to a few links, Cleo Longtime.");
    expect(bot!.replies().at(-1)).toEqual(lastWord);
    const said = bot!.replies().slice(0, -1);
    const reports = reportedMessages(s).filter((r) => r.id !== sentinel);
    const expectedIds = allExpected(history);
    expect(reports.map((r) => r.id).sort((a, b) => a - b)).toEqual(expectedIds);

    // mention_storm reports with its own reason template; the others name their rules.
    const rulesOf = new Map(
      reports.map((r) => [r.id, r.reason.startsWith("Mention storm in ") ? ["mass_mentions"] : r.rules]),
    );
    expect(reports.filter((r) => history.expected.mass_mentions.includes(r.id)).map((r) => r.reason)).toEqual(
      [
        "Mention storm in lobby: mass mentions: 4 users mentioned (limit 3)",
        "Mention storm in lobby: mass mentions: a wildcard mention (@all, @everyone, @channel or @topic)",
      ],
    );
    for (const [rule, ids] of Object.entries(history.expected) as [SeededRule, number[]][]) {
      const named = expectedIds.filter((id) => rulesOf.get(id)?.includes(rule));
      expect([rule, named]).toEqual([rule, ids]);
    }
    // Direct messages to the bot were checked, and a DM it was not part of could not be.
    const dms = new Set(
      control
        .messages()
        .filter((m) => m.type === "private")
        .map((m) => m.id as number),
    );
    expect(expectedIds.filter((id) => dms.has(id)).length).toBe(4);

    const byId = new Map(
      control
        .messages()
        .map((m) => [m.id as number, control.messageView(m.id as number) as unknown as TestMessage]),
    );
    const people = (m: TestMessage) => (m.type === "private" ? m.display_recipient.map((r) => r.id) : []);
    const conversation = (m: TestMessage) =>
      m.type === "stream" ? `${m.stream_id}/${m.subject}` : `dm:${JSON.stringify(people(m))}`;

    // reply: in the conversation of each link flood (a DM to the bot is answered by DM).
    const replies = said.filter((m) => m.content.startsWith("Please keep it to a few links"));
    expect(replies.map((m) => m.content)).toEqual(
      history.expected.link_flood.map((id) => {
        const sender = Object.values(history.users).find((u) => u.userId === byId.get(id)!.sender_id)!;
        return `Please keep it to a few links, ${sender.fullName}.`;
      }),
    );
    const channelReply = replies.find((m) => m.type === "stream")!;
    expect(conversation(channelReply)).toBe(conversation(byId.get(history.expected.link_flood[0]!)!));

    // dm_sender: a direct message to the sender of each blocked word, linking the message.
    const told = said.filter((m) => m.content.startsWith("Your message"));
    expect(told.map((m) => [m.type, m.content.match(/#narrow\/id\/(\d+)/)?.[1]])).toEqual(
      history.expected.keywords.map((id) => ["private", String(id)]),
    );
    for (const m of told) {
      const original = byId.get(Number(m.content.match(/#narrow\/id\/(\d+)/)![1]))!;
      expect(people(m)).toEqual(expect.arrayContaining([original.sender_id]));
    }

    // notify_channel: #mod-log > flags, one line per blocked pattern.
    const modLogId = control.messages().find((m) => m.content === "scam report: handled")!.stream_id;
    const modLog = said.filter(
      (m) => m.type === "stream" && m.stream_id === modLogId && m.subject === "flags",
    );
    expect(modLog.map((m) => m.content)).toEqual(
      history.expected.blocked_patterns.map((id) => {
        const m = byId.get(id)!;
        const sender = Object.values(history.users).find((u) => u.userId === m.sender_id)!;
        const where = m.type === "stream" ? "lobby" : "a direct message";
        return `blocked pattern by ${sender.fullName} in ${where}: ${s.url}/#narrow/id/${id}`;
      }),
    );
    expect(said).toHaveLength(replies.length + told.length + modLog.length);
  }, 120_000);
});

describe("the moderation bot backtested over the seeded history", () => {
  it("lists exactly the messages each rule should trip, and writes nothing", async () => {
    const s = await start();
    const history = await seedModerationHistory(s);
    dir = await mkdtemp(join(tmpdir(), "bothost-moderation-"));
    const file = join(dir, "bothost.yaml");
    const apiKey = s.control.apiKeyOf(history.bot.email);
    await writeFile(
      file,
      `server:\n  url: ${s.url}\nstate:\n  path: ${join(dir, "state")}\nbots:\n  moderation:\n` +
        `    module: ${join(repoRoot, "bots/moderation.ts")}\n    email: ${history.bot.email}\n    api_key: ${apiKey}\n` +
        `    settings: ${JSON.stringify(history.settings)}\n`,
    );
    const { config, source } = await loadConfigWithSource(file);
    const [loaded] = await loadBots(config, source);
    const report = await backtest({
      bot: loaded!,
      url: s.url,
      apiKey,
      range: { narrows: [[]], limit: 10_000 },
    });
    expect(report.scanned).toBeGreaterThanOrEqual(300);
    for (const [rule, ids] of Object.entries(history.expected) as [SeededRule, number[]][]) {
      const found = report.findings.filter((f) => f.rules.includes(rule)).map((f) => f.id);
      expect([rule, found]).toEqual([rule, ids]);
    }
    expect(report.findings.map((f) => f.id)).toEqual(allExpected(history));
    const writes = s.control.requests.filter(
      (r) =>
        r.email === history.bot.email && r.method !== "GET" && r.path !== "/register" && r.path !== "/events",
    );
    expect(writes).toEqual([]);
  }, 60_000);
});
