/**
 * The moderation bot over a seeded history of hundreds of messages on the sandbox (timestamps
 * spread by the sandbox clock): a backtest finds, for each rule, exactly the messages made to trip
 * it and none of those made to come close, direct messages to the bot included, with no write
 * request; run live, each kind of action does what it says.
 * It imports "bothost", which resolves to dist/: run `npm run build` first (`npm test` does).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ModerationSettings } from "../../../bots/moderation/settings.ts";
import moderation from "../../../bots/moderation.ts";
import { loadBots } from "../../../src/bot/load-bots.ts";
import { loadConfigWithSource } from "../../../src/config/load-config.ts";
import { backtest } from "../../../src/daemon/backtest.ts";
import { defaultOrg } from "../../../src/sandbox/org/default-org.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { repoRoot } from "../../e2e/_support/cli.ts";
import { type BotDaemon, startBots } from "../_bot-daemon.ts";

const BOT = "bot@sandbox.example";
const NEW = "member@sandbox.example"; // joined when the sandbox started
const OLD = "old@sandbox.example";
const LOUD = "loud@sandbox.example";
const OWNER = "owner@sandbox.example";

const SETTINGS = {
  rules: {
    flood: { max_messages: 5, per_seconds: 10 },
    repeated_message: { max_repeats: 2, within_seconds: 600, min_length: 10 },
    new_member_links: { min_account_age_days: 3 },
    link_flood: { max_links: 3, exempt: { channels: ["links"] } },
    keywords: { words: ["scam", "wire transfer"] },
    mention_storm: { max_user_mentions: 3, wildcards: false },
  },
};
type Rule = "flood" | "repeated_message" | "new_member_links" | "link_flood" | "keywords" | "mass_mentions";

let sandbox: Sandbox | undefined;
let running: BotDaemon | undefined;
let dir: string | undefined;

afterEach(async () => {
  await running?.stop();
  running = undefined;
  await sandbox?.stop();
  sandbox = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function start(): Promise<Sandbox> {
  const org = defaultOrg();
  org.users!.push(
    { email: OLD, full_name: "Otto Old", date_joined: "2020-01-01T00:00:00.000Z" },
    { email: LOUD, full_name: "Lou Loud", date_joined: "2020-01-01T00:00:00.000Z" },
  );
  const everyone = [OWNER, NEW, OLD, LOUD, BOT];
  org.channels = [
    ...(org.channels ?? []).map((c) => (c.name === "general" ? { ...c, subscribers: everyone } : c)),
    { name: "random", subscribers: everyone },
    { name: "links", subscribers: everyone },
    { name: "mods", subscribers: [OWNER, BOT] },
  ];
  sandbox = await startSandbox({ heartbeatSeconds: 1, org });
  return sandbox;
}

/**
 * Hundreds of messages, 30 s apart unless a burst says otherwise; returns, per rule, the ids
 * made to trip it. Each trip has a near miss beside it (one below the threshold).
 */
function seed(s: Sandbox): Record<Rule, number[]> {
  const trips: Record<Rule, number[]> = {
    flood: [],
    repeated_message: [],
    new_member_links: [],
    link_flood: [],
    keywords: [],
    mass_mentions: [],
  };
  const post = (from: string, content: string, to = "general", gapMs = 30_000) => {
    s.control.advanceClock(gapMs);
    return s.control.sendAs(from, { type: "stream", to, topic: "chat", content }).id;
  };
  const dm = (from: string, content: string) => {
    s.control.advanceClock(30_000);
    return s.control.sendAs(from, { type: "direct", to: [BOT], content }).id;
  };
  for (let i = 0; i < 320; i++) {
    const from = [OLD, LOUD, OWNER][i % 3]!;
    post(from, `update ${i}: the release plan, item ${i * 7}`, i % 2 ? "general" : "random");
    switch (i) {
      case 20: // flood: 6 in 10 s trips on the sixth; the near miss posts 5
        for (let k = 0; k < 5; k++) post(LOUD, `quick note ${i}.${k}`, "general", 1_000);
        trips.flood.push(post(LOUD, `quick note ${i}.5`, "general", 1_000));
        break;
      case 40:
        for (let k = 0; k < 5; k++) post(OLD, `burst ${i}.${k}`, "general", 1_000);
        break;
      case 60: // repeated_message: a third copy within 10 minutes trips; two do not
        post(OLD, "Anyone selling a bike?", "general");
        post(OLD, "anyone  selling a bike?", "random");
        trips.repeated_message.push(post(OLD, "ANYONE selling a bike?", "general"));
        post(LOUD, "Is the build green now?", "general");
        post(LOUD, "Is the build green now?", "general");
        break;
      case 80: // new_member_links: a link from someone who joined today; an old member's is fine
        trips.new_member_links.push(post(NEW, "look at https://deals.example/1", "random"));
        post(OLD, "docs: https://docs.example/setup", "random");
        break;
      case 100: // link_flood: 4 links trip, 3 do not, 4 in #links are exempt
        trips.link_flood.push(
          post(OLD, "a https://a.example b https://b.example c https://c.example d https://d.example"),
        );
        post(OLD, "a https://a.example b https://b.example c https://c.example");
        post(OLD, "a https://a.example b https://b.example c https://c.example d https://d.example", "links");
        break;
      case 120: // keywords, also in a direct message to the bot; "scampi" is not "scam"
        trips.keywords.push(post(LOUD, "this giveaway is a scam"));
        post(LOUD, "scampi for lunch?");
        trips.keywords.push(dm(OLD, "they asked me for a Wire  Transfer"));
        dm(OLD, "how do I transfer a wire?");
        break;
      case 140: // mention storm: 4 users trip, 3 do not
        trips.mass_mentions.push(
          post(LOUD, "@**Mel Member** @**Otto Old** @**Olive Owner** @**Sandbox Bot** look"),
        );
        post(LOUD, "@**Mel Member** @**Otto Old** @**Olive Owner** look");
        break;
    }
  }
  return trips;
}

describe("the moderation bot over a seeded history", () => {
  it("backtested, lists exactly the messages each rule should trip, and writes nothing", async () => {
    const s = await start();
    const expected = seed(s);
    dir = await mkdtemp(join(tmpdir(), "bothost-moderation-"));
    const file = join(dir, "bothost.yaml");
    await writeFile(
      file,
      `server:\n  url: ${s.url}\nstate:\n  path: ${join(dir, "state")}\nbots:\n  moderation:\n` +
        `    module: ${join(repoRoot, "bots/moderation.ts")}\n    email: ${BOT}\n    api_key: ${s.control.apiKeyOf(BOT)}\n` +
        `    settings: ${JSON.stringify(SETTINGS)}\n`,
    );
    const { config, source } = await loadConfigWithSource(file);
    const [bot] = await loadBots(config, source);
    const report = await backtest({
      bot: bot!,
      url: s.url,
      apiKey: s.control.apiKeyOf(BOT),
      range: { narrows: [[]], limit: 10_000 },
    });
    expect(report.scanned).toBeGreaterThan(300);
    const found = (rule: Rule) => report.findings.filter((f) => f.rules.includes(rule)).map((f) => f.id);
    for (const rule of Object.keys(expected) as Rule[])
      expect([rule, found(rule)]).toEqual([rule, expected[rule]]);
    expect(
      report.findings.every((f) => f.actions.some((a) => a.does.startsWith(`report message ${f.id} as`))),
    ).toBe(true);
    const writes = s.control.requests.filter(
      (r) => r.email === BOT && r.method !== "GET" && r.path !== "/register" && r.path !== "/events",
    );
    expect(writes).toEqual([]);
  }, 60_000);
});

describe("the moderation bot's actions, live", () => {
  it("reply, DM the sender, notify a channel; a direct message to the bot is reported", async () => {
    const s = await start();
    const settings = {
      rules: {
        link_flood: { max_links: 1, actions: [{ reply: "Easy on the links, {name}." }] },
        keywords: {
          words: ["scam"],
          actions: [
            "report",
            { dm_sender: "Your message in {channel} was flagged: {details}." },
            { notify_channel: { channel: "mods", topic: "flags", content: "{rules} by {name}: {link}" } },
          ],
        },
      },
    };
    running = await startBots(s, { moderation: { email: BOT, definition: moderation, settings } });
    const botId = s.control.users().find((u) => u.email === BOT)!.user_id;
    const byBot = () => s.control.messages().filter((m) => m.sender_id === botId);
    const linky = s.control.sendAs(OLD, {
      type: "stream",
      to: "general",
      topic: "t",
      content: "https://a.example https://b.example",
    }).id;
    await expect.poll(() => byBot().map((m) => m.content)).toEqual(["Easy on the links, Otto Old."]);

    const dm = s.control.sendAs(OLD, { type: "direct", to: [BOT], content: "is this a scam?" }).id;
    await expect.poll(() => byBot().length).toBe(3);
    expect(
      byBot()
        .slice(1)
        .map((m) => m.content)
        .sort(),
    ).toEqual([
      'Your message in a direct message was flagged: blocked word: uses "scam".',
      `blocked word by Otto Old: #narrow/id/${dm}`,
    ]);
    const reports = () =>
      s.control.messages().filter((m) => String(m.content).includes("reported a direct message sent by"));
    await expect.poll(() => reports().length).toBe(1);
    expect(linky).toBeLessThan(dm);
  }, 30_000);
});

describe("the moderation bot's rule settings", () => {
  it("name the field of a bad rule, action or exemption", () => {
    const problems = (rules: unknown) =>
      (ModerationSettings.safeParse({ rules }).error?.issues ?? []).map((i) => i.path.join("."));
    expect(problems({ keywords: { words: [] } })).toEqual(["rules.keywords.words"]);
    expect(problems({ link_flood: { actions: [{ shout: "hi" }] } })).toEqual(["rules.link_flood.actions.0"]);
    expect(problems({ flood: { exempt: { roles: ["wizard"] } } })).toEqual(["rules.flood.exempt.roles.0"]);
    expect(problems({ mass_mentions: {}, mention_storm: {} })).toEqual(["rules"]);
    expect(problems({ repeated_message: { actions: [{ reply: "{nobody}" }] } })).toEqual([
      "rules.repeated_message.actions.0.reply",
    ]);
  });
});
