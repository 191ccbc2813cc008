/**
 * The shipped moderation bot (bots/moderation.ts) in a real daemon against the sandbox: each
 * rule live and in dry run, exemptions, the message to the sender, the edit re-check, the
 * start-up check of the channels the settings name, and a message's run again after an action failed.
 * It imports "bothost", which resolves to dist/: run `npm run build` first (`npm test` does).
 */
import { afterEach, describe, expect, it } from "vitest";
import moderation from "../../../bots/moderation.ts";
import { createClient } from "../../../src/api/create-client.ts";
import { defaultOrg } from "../../../src/sandbox/org/default-org.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { type BotDaemon, startBots } from "../../support/bot-daemon.ts";

const BOT = "bot@sandbox.example";
const OLD = "old@sandbox.example"; // joined in 2020
const NEW = "member@sandbox.example"; // joined when the sandbox started
const OWNER = "owner@sandbox.example";

let sandbox: Sandbox | undefined;
let running: BotDaemon | undefined;
/** Called with each answer the sandbox gives (a test may fail a later request from it). */
let onResponse: ((r: { method: string; route: string | null; status: number }) => void) | undefined;

afterEach(async () => {
  onResponse = undefined;
  await running?.stop();
  running = undefined;
  await sandbox?.stop();
  sandbox = undefined;
});

/**
 * `extra`: YAML lines for the bot's config block, e.g. "dry_run: true"; `visibility`: the realm's
 * email_address_visibility (default everyone).
 */
async function start(
  settings: Record<string, unknown>,
  extra?: string,
  visibility?: "everyone" | "members" | "admins",
  beforeBots?: (sandbox: Sandbox) => void,
) {
  const org = defaultOrg();
  if (visibility) org.realm = { ...org.realm, email_address_visibility: visibility };
  org.users!.push({ email: OLD, full_name: "Otto Old", date_joined: "2020-01-01T00:00:00.000Z" });
  const everyone = [OWNER, NEW, OLD, BOT];
  org.channels = [
    ...(org.channels ?? []).map((c) => (c.name === "general" ? { ...c, subscribers: everyone } : c)),
    { name: "random", subscribers: everyone },
    { name: "news", subscribers: everyone },
  ];
  sandbox = await startSandbox({ heartbeatSeconds: 1, org, onResponse: (r) => onResponse?.(r) });
  beforeBots?.(sandbox);
  running = await startBots(sandbox, {
    moderation: { email: BOT, definition: moderation, settings, ...(extra ? { extra } : {}) },
  });
  return sandbox;
}

/** Send as `email`, then wait until the bot has handled the message. */
async function post(email: string, content: string, to = "general", topic = "chat") {
  const before = running!.daemon.bots[0]!.status.handled;
  const { id } = sandbox!.control.sendAs(email, { type: "stream", to, topic, content });
  await expect.poll(() => running!.daemon.bots[0]!.status.handled).toBeGreaterThan(before);
  return id;
}

const reports = () =>
  sandbox!.control.messages().filter((m) => String(m.content).includes("reported a message sent by"));
const dryRunLines = () => running!.logged("dry run: report message");

interface RuleCase {
  name: string;
  rules: Record<string, unknown>;
  /** Break the rule; resolves the id of the message that should be reported. */
  act: () => Promise<number>;
  reason: string;
  type: string;
}

const cases: RuleCase[] = [
  {
    name: "flood",
    rules: { flood: { max_messages: 3, per_seconds: 60 } },
    act: async () => {
      for (let i = 1; i <= 3; i++) await post(OLD, `message ${i}`);
      return post(OLD, "message 4");
    },
    reason: "message flood: 4 messages in 60 s (limit 3)",
    type: "Spam",
  },
  {
    name: "cross_post",
    rules: { cross_post: { min_channels: 3, within_seconds: 120, min_length: 10 } },
    act: async () => {
      await post(OLD, "Check out my new  channel!", "general");
      await post(OLD, "check out my new channel!", "random");
      return post(OLD, "CHECK OUT MY NEW CHANNEL!", "news");
    },
    reason: "cross-posting: the same message in 3 channels within 120 s",
    type: "Spam",
  },
  {
    name: "new_member_links",
    rules: { new_member_links: { min_account_age_days: 3 } },
    act: async () => {
      await post(OLD, "old hands may share https://example.org/docs");
      await post(NEW, "a link in `https://code.example` is not a link");
      return post(NEW, "see www.cheap-watches.example now");
    },
    reason: "link from a new member: a link from a member who joined 0 hours ago (members need 3 days)",
    type: "Spam",
  },
  {
    name: "blocked_patterns",
    rules: {
      blocked_patterns: { patterns: ["free\\s+crypto", { pattern: "SELL", flags: "", name: "shouting" }] },
    },
    act: async () => {
      await post(OLD, "I sell bikes");
      return post(OLD, "FREE   Crypto, SELL now");
    },
    reason: 'blocked pattern: matches blocked pattern "free\\s+crypto", "shouting"',
    type: "Violates community norms",
  },
  {
    name: "mass_mentions",
    rules: { mass_mentions: { max_user_mentions: 2, wildcards: true } },
    act: async () => {
      await post(OLD, "@**Olive Owner** @**Mel Member** and @_**Sandbox Bot** (silent)");
      return post(OLD, "@**Olive Owner** @**Mel Member** @**Sandbox Bot** and @**all**");
    },
    reason:
      "mass mentions: 3 users mentioned (limit 2) and a wildcard mention (@all, @everyone, @channel or @topic)",
    type: "Violates community norms",
  },
];

describe("moderation rules, live", () => {
  it.each(cases)("$name: reports the breaking message once, with the rule and details", async (c) => {
    await start({ rules: c.rules });
    const id = await c.act();
    await expect.poll(() => reports().length).toBe(1);
    const body = String(reports()[0]!.content);
    expect(body).toContain(`**${c.type}**. Flagged by the moderation bot (${c.name}): ${c.reason}.`);
    expect(body).toContain(`@${id}**`); // "Original message at #**channel>topic@id**"
    expect(dryRunLines()).toEqual([]);
    expect(running!.logged(`reported message ${id}`)).toMatchObject([{ messageId: id, rules: [c.name] }]);
    // Named once: the line's own fields do not repeat what ctx.log binds.
    const line = running!
      .logText()
      .split("\n")
      .find((l) => l.includes(`reported message ${id}`));
    expect(line?.match(/"messageId":/g)).toHaveLength(1);
  });
});

describe("moderation rules, with the bot-level dry_run", () => {
  it.each(cases)("$name: reports nothing and logs what it would have reported", async (c) => {
    await start({ rules: c.rules, notify_sender: "Hi {{name}}" }, "dry_run: true");
    const id = await c.act();
    expect(reports()).toEqual([]);
    expect(dryRunLines().map((l) => l.msg)).toEqual([
      expect.stringMatching(new RegExp(`^dry run: report message ${id} as `)),
    ]);
    // The bot says what it would have done: nothing was reported (ctx.bot.dryRun).
    const decided = running!.logged(`would report message ${id}`);
    expect(decided).toMatchObject([{ messageId: id, rules: [c.name] }]);
    expect(decided[0]!.msg).toContain(c.reason);
    expect(running!.logged(`reported message ${id}`)).toEqual([]);
    expect(running!.logged("dry run: send a direct message to")).toMatchObject([
      { msg: expect.stringMatching(/: "Hi (Otto Old|Mel Member)"$/) },
    ]);
    // No write of the bot reached the server, only its event queue's calls.
    const writes = sandbox!.control.requests.filter(
      (r) => r.email === BOT && r.method !== "GET" && r.path !== "/register" && r.path !== "/events",
    );
    expect(writes).toEqual([]);
  });
});

describe("moderation exemptions and answers", () => {
  const flood = { flood: { max_messages: 1, per_seconds: 60 } };

  it("exempts roles, channels and bots", async () => {
    const s = await start({ rules: flood, exempt: { roles: ["owner"], channels: ["random"], bots: true } });
    s.control.createUser({
      email: "helper-bot@sandbox.example",
      full_name: "Helper",
      bot: "generic",
      owner: OWNER,
      channels: ["general"],
    });
    for (let i = 0; i < 3; i++) await post(OWNER, `owner ${i}`);
    for (let i = 0; i < 3; i++) await post(OLD, `random ${i}`, "random");
    for (let i = 0; i < 3; i++) await post("helper-bot@sandbox.example", `bot ${i}`);
    expect(reports()).toEqual([]);
    await post(OLD, "one");
    await post(OLD, "two");
    await expect.poll(() => reports().length).toBe(1);
  });

  // The bot is a member: with "members" it sees real emails (as `delivery_email`; the API `email`
  // is then user<id>@host), with "admins" (new organizations' default) none.
  it.each([
    ["members", true],
    ["admins", false],
  ] as const)(
    "exempt.users by email, visibility %s: matched when the bot may see the email, else named in one warning",
    async (visibility, shown) => {
      const nobody = "nobody@elsewhere.example";
      await start(
        { rules: { flood: { ...flood.flood, exempt: { users: [nobody] } } }, exempt: { users: [OLD] } },
        undefined,
        visibility,
      );
      await post(OLD, "one");
      await post(OLD, "two");
      if (shown) expect(reports()).toEqual([]);
      else await expect.poll(() => reports().length).toBe(1);
      const warnings = () => running!.logged("exempt.users:").filter((l) => l.level === 40);
      await expect.poll(() => warnings().length).toBe(1);
      expect(warnings()[0]).toMatchObject({
        bot: "moderation",
        entries: [...(shown ? [] : [`exempt.users[0]: ${OLD}`]), `rules.flood.exempt.users[0]: ${nobody}`],
        msg: expect.stringContaining("list each such person by user id instead"),
      });
    },
  );

  it("tells the sender by direct message, from the template", async () => {
    const s = await start({
      rules: flood,
      notify_sender:
        "Hi {{name}}, your message in #{{channel}} > {{topic}} was sent to the moderators ({{rules}}): {{details}}.",
    });
    await post(OLD, "one");
    await post(OLD, "two", "general", "deals");
    const oldId = s.control.users().find((u) => u.email === OLD)!.user_id;
    const botId = s.control.users().find((u) => u.email === BOT)!.user_id;
    await expect
      .poll(() => s.control.messages().find((m) => m.sender_id === botId && m.type === "private"))
      .toMatchObject({
        content:
          "Hi Otto Old, your message in #general > deals was sent to the moderators (message flood): " +
          "message flood: 2 messages in 60 s (limit 1).",
        dm_user_ids: [oldId, botId].sort((a, b) => a - b),
      });
  });

  it("{{where}} names the channel and topic, or a direct message sent to the bot", async () => {
    const s = await start({
      rules: { keywords: { words: ["scam"] } },
      notify_sender: "Your message in {{where}} was sent to the moderators.",
    });
    const botId = s.control.users().find((u) => u.email === BOT)!.user_id;
    const toBot = () => s.control.messages().filter((m) => m.sender_id === botId && m.type === "private");
    await post(OLD, "a scam", "general", "deals");
    await expect.poll(() => toBot().length).toBe(1);
    s.control.sendAs(OLD, { type: "direct", to: [BOT], content: "another scam" });
    await expect.poll(() => toBot().length).toBe(2);
    expect(toBot().map((m) => m.content)).toEqual([
      "Your message in #general > deals was sent to the moderators.",
      "Your message in a direct message was sent to the moderators.",
    ]);
  });

  it("re-checks edited messages and quotes the edit history in the report", async () => {
    const s = await start({ rules: { blocked_patterns: { patterns: ["free\\s+crypto"] } } });
    const id = await post(OLD, "hello everyone");
    expect(reports()).toEqual([]);
    const old = createClient({ url: s.url, email: OLD, apiKey: s.control.apiKeyOf(OLD) });
    await old.messages.update(id, { content: "hello everyone, free crypto at my site" });
    await expect.poll(() => reports().length).toBe(1);
    const body = String(reports()[0]!.content);
    expect(body).toMatch(
      /Flagged by the moderation bot \(blocked_patterns\): blocked pattern: matches blocked pattern "free\\s\+crypto"\. Edit history: original \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\) “hello everyone”; edited \d{4}-\d\d-\d\d \d\d:\d\d UTC to “hello everyone, free crypto at my site”\./,
    );
    expect(s.control.requests.filter((r) => r.path === `/messages/${id}/history`)).toHaveLength(1);
  });

  it("an edit's actions, one failing once: its handler's retry does not repeat those done", async () => {
    const s = await start(
      {
        rules: {
          blocked_patterns: {
            patterns: ["free\\s+crypto"],
            actions: [
              "report",
              { reply: "Please keep offers out of {{channel}}." },
              { notify_channel: { channel: "news", topic: "flags", content: "{{details}}: {{link}}" } },
            ],
          },
        },
      },
      "retries: { attempts: 3, backoff: 50ms, max_backoff: 50ms }",
    );
    const id = await post(OLD, "hello everyone");
    // The reply goes out; the channel notification after it is refused once.
    onResponse = (r) => {
      if (r.method !== "POST" || r.route !== "/messages" || r.status !== 200) return;
      onResponse = undefined;
      s.control.failNext(1, { status: 503, paths: [/^\/messages$/], methods: ["POST"] });
    };
    const old = createClient({ url: s.url, email: OLD, apiKey: s.control.apiKeyOf(OLD) });
    await old.messages.update(id, { content: "hello everyone, free crypto at my site" });
    await expect.poll(() => running!.logged("handler succeeded on a later attempt")).toHaveLength(1);
    const botId = s.control.users().find((u) => u.email === BOT)!.user_id;
    const said = s.control
      .messages()
      .filter((m) => m.sender_id === botId)
      .map((m) => String(m.content).split(":")[0]);
    expect(said).toEqual(["Please keep offers out of general.", "blocked pattern"]);
    expect(reports()).toHaveLength(1);
  });

  it("rejects bad settings at their config path", () => {
    const parse = (v: unknown) =>
      (moderation.settings as { safeParse(v: unknown): { error?: { issues: unknown[] } } }).safeParse(v);
    expect(parse({ rules: {} }).error?.issues).toMatchObject([
      { path: ["rules"], message: expect.stringContaining("turns no rule on") },
    ]);
    expect(parse({ rules: { blocked_patterns: { patterns: ["(unclosed"] } } }).error?.issues).toMatchObject([
      {
        path: ["rules", "blocked_patterns", "patterns", 0],
        message: expect.stringContaining("is not a valid regular expression"),
      },
    ]);
    expect(parse({ rules: { flood: {} }, notify_sender: "hi {{user}}" }).error?.issues).toMatchObject([
      {
        path: ["notify_sender"],
        message:
          "uses {{user}}; the placeholders are {{name}}, {{rules}}, {{details}}, {{channel}}, {{topic}}, {{where}}, {{link}}",
      },
    ]);
    // The single-brace spelling of earlier versions: refused, with the new spelling named.
    const legacy = parse({ rules: { flood: { actions: [{ reply: "calm down, {name}" }] } } });
    expect(legacy.error?.issues).toMatchObject([
      {
        path: ["rules", "flood", "actions", 0, "reply"],
        message: "uses {name}, the old placeholder spelling: write {{name}}",
      },
    ]);
    // The bot's own dry_run is gone: the bot-level dry_run captures every write.
    expect(parse({ rules: { flood: {} }, dry_run: true }).error?.issues).toMatchObject([
      { path: ["dry_run"], message: expect.stringContaining("set dry_run: true on the bot itself") },
    ]);
  });
});

describe("moderation's channels checked at start", () => {
  it("warns once at start of each channel the settings name that the bot cannot see", async () => {
    const settings = {
      exempt: { channels: ["General", "modlog"] },
      rules: {
        keywords: {
          words: ["scam"],
          exempt: { channels: [999] },
          actions: [
            "report",
            { notify_channel: { channel: "mod-logs", topic: "t", content: "{{details}}" } },
            // Private, and the bot is not subscribed: it cannot post there.
            { notify_channel: { channel: "moderation", topic: "t", content: "{{details}}" } },
          ],
        },
      },
    };
    await start(settings);
    await expect.poll(() => running!.logged("the bot can see: check the spelling")).toHaveLength(1);
    const [line] = running!.logged("the bot can see: check the spelling");
    const at = "bots.moderation.settings.";
    expect(line!.settings).toEqual([
      `${at}exempt.channels[1]`,
      `${at}rules.keywords.exempt.channels[0]`,
      `${at}rules.keywords.actions[1].notify_channel.channel`,
      `${at}rules.keywords.actions[2].notify_channel.channel`,
    ]);
    expect(line!.msg).toMatchInlineSnapshot(
      `"bots.moderation.settings.exempt.channels[1]: "modlog", bots.moderation.settings.rules.keywords.exempt.channels[0]: channel id 999, bots.moderation.settings.rules.keywords.actions[1].notify_channel.channel: "mod-logs", bots.moderation.settings.rules.keywords.actions[2].notify_channel.channel: "moderation" name no channels the bot can see: check the spelling (or give the channel's id), and subscribe the bot to a private channel."`,
    );
  });

  it("a server failing that check's read is told in one warning, no handler failure", async () => {
    const refused = { status: 400, body: { result: "error", msg: "Bad request" } };
    const settings = {
      exempt: { channels: ["modlog"] },
      rules: { keywords: { words: ["scam"], actions: ["report"] } },
    };
    await start(settings, undefined, undefined, (s) =>
      s.control.failNext(1, { ...refused, paths: [/^\/streams$/], methods: ["GET"] }),
    );
    await expect
      .poll(() =>
        running!.logged(
          "could not read the channels, groups, users and snippets to check the ones the settings name",
        ),
      )
      .toHaveLength(1);
    expect(running!.logged("onStart handler failed")).toEqual([]);
    expect(running!.logged("the bot can see: check the spelling")).toEqual([]);
  });
});

describe("moderation, a message's handler run again after an action failed", () => {
  // A temporary failure (a 4xx refuses the request as made: it is not retried).
  const refused = { status: 503, body: { result: "error", msg: "Try again" } };
  const told = () => {
    const botId = sandbox!.control.users().find((u) => u.email === BOT)!.user_id;
    return sandbox!.control.messages().filter((m) => m.sender_id === botId && m.type === "private");
  };

  // The run again finds the same rules broken: a posting rule neither counts the message twice
  // nor takes the report its first run made for the burst's, so the sender is still told.
  it.each([
    ["flood", { flood: { max_messages: 1, per_seconds: 60 } }, ["one", "two"]],
    [
      "cross_post",
      { cross_post: { min_channels: 2, within_seconds: 120, min_length: 5 } },
      ["same text", "same text"],
    ],
    [
      "repeated_message",
      { repeated_message: { max_repeats: 1, within_seconds: 600, min_length: 5 } },
      ["again", "again"],
    ],
  ] as const)("%s: the sender is told once, the report made once", async (rule, rules, texts) => {
    const s = await start(
      { rules, notify_sender: "Hi {{name}}: {{details}}." },
      "retries: { attempts: 3, backoff: 50ms }",
    );
    await post(OLD, texts[0], "general");
    // The direct message to the sender is refused once: the handler throws and runs again.
    s.control.failNext(1, { ...refused, paths: [/^\/messages$/], methods: ["POST"] });
    const id = await post(OLD, texts[1], "random");
    await expect.poll(() => told().length).toBe(1);
    expect(String(told()[0]!.content)).toMatch(/^Hi Otto Old: /);
    expect(running!.logged("handler failed")).not.toEqual([]);
    expect(s.control.requests.filter((r) => r.path === `/messages/${id}/report`)).toHaveLength(1);
    // The second run gets the first's `reported: true` back, with no request, and says so.
    expect(running!.logged(`reported message ${id}`)).toEqual([expect.objectContaining({ rules: [rule] })]);
    expect(running!.logged(`message ${id} was reported by an earlier run of its handler: not again`)).toEqual(
      [expect.objectContaining({ rules: [rule] })],
    );
  });
});
