import { describe, expect, it } from "vitest";
import { hasLink, mentions, withoutCode } from "../../../bots/moderation/content.ts";
import { describeHistory } from "../../../bots/moderation/edit-history.ts";
import type { RuleName, Rules, ScannedMessage } from "../../../bots/moderation/rule-types.ts";
import { createRuleState, scanMessage } from "../../../bots/moderation/rules.ts";
import { ModerationSettings, rulesFrom } from "../../../bots/moderation/settings.ts";

const T0 = 1_700_000_000;
let nextId = 1;
const msg = (over: Partial<ScannedMessage> = {}): ScannedMessage => ({
  id: nextId++,
  senderId: 8,
  channelId: 5,
  content: "hello",
  timestamp: T0,
  ...over,
});
const rulesOf = (matches: ReturnType<typeof scanMessage>) => matches.map((m) => m.rule);

describe("scanMessage", () => {
  it("flood: one report per burst, another once the window has passed", () => {
    const rules: Rules = { flood: { maxMessages: 3, perSeconds: 10, reportType: "spam" } };
    const state = createRuleState();
    const at = (s: number, senderId = 8) =>
      rulesOf(scanMessage(msg({ timestamp: T0 + s, senderId }), rules, state));
    expect([at(0), at(1), at(2), at(3), at(4), at(5)]).toEqual([[], [], [], ["flood"], [], []]);
    expect(at(3, 9)).toEqual([]); // another sender has their own count
    expect([at(30), at(31), at(32), at(33)]).toEqual([[], [], [], ["flood"]]);
  });

  it("a message scanned again (its handler ran again) gets its first scan's rules and is counted once", () => {
    const rules: Rules = { flood: { maxMessages: 2, perSeconds: 10, reportType: "spam" } };
    const state = createRuleState();
    const first = msg({ timestamp: T0 });
    const second = msg({ timestamp: T0 + 1 });
    expect([first, second, second].map((m) => rulesOf(scanMessage(m, rules, state)))).toEqual([[], [], []]);
    const third = msg({ timestamp: T0 + 2 });
    expect(rulesOf(scanMessage(third, rules, state))).toEqual(["flood"]);
    expect(scanMessage(third, rules, state)).toMatchObject([{ details: "3 messages in 10 s (limit 2)" }]);
  });

  it("cross_post: the same normalised text by one sender in N channels; direct and short messages never", () => {
    const rules: Rules = {
      crossPost: { minChannels: 2, withinSeconds: 60, minLength: 5, reportType: "spam" },
    };
    const state = createRuleState();
    const scan = (over: Partial<ScannedMessage>) => rulesOf(scanMessage(msg(over), rules, state));
    expect(scan({ content: "Buy  now!", channelId: 1 })).toEqual([]);
    expect(scan({ content: "buy now!", channelId: 1, timestamp: T0 + 1 })).toEqual([]); // same channel
    expect(scan({ content: "BUY NOW!", channelId: 2, timestamp: T0 + 2 })).toEqual(["cross_post"]);
    expect(scan({ content: "buy now!", channelId: 3, timestamp: T0 + 3 })).toEqual([]); // reported already
    expect(scan({ content: "ok", channelId: 1 })).toEqual([]);
    expect(scan({ content: "ok", channelId: 2 })).toEqual([]);
    const { channelId: _, ...direct } = msg({ content: "buy now!" });
    expect(scanMessage(direct, rules, state)).toEqual([]);
    expect(scan({ content: "buy now!", channelId: 4, timestamp: T0 + 200 })).toEqual([]); // window passed
  });

  it("flood, cross_post, repeated_message: a later message handled first does not make an earlier one trip", () => {
    const rules: Rules = {
      flood: { maxMessages: 1, perSeconds: 10, reportType: "spam" },
      crossPost: { minChannels: 2, withinSeconds: 60, minLength: 5, reportType: "spam" },
      repeatedMessage: { maxRepeats: 1, withinSeconds: 60, minLength: 5, reportType: "spam" },
    };
    const state = createRuleState();
    const scan = (s: number, channelId: number) =>
      rulesOf(scanMessage(msg({ content: "same words", channelId, timestamp: T0 + s }), rules, state));
    expect(scan(20, 1)).toEqual([]);
    expect(scan(0, 2)).toEqual([]); // sent 20 s earlier in another channel, handled second
    expect(scan(5, 3)).toEqual(["flood", "cross_post", "repeated_message"]); // 0 and 5 count; 20 does not
  });

  it("link_flood: too many links in one message, or from one sender within the window (once per window)", () => {
    const rules: Rules = {
      linkFlood: { maxLinks: 2, perSender: { maxLinks: 4, withinSeconds: 60 }, reportType: "spam" },
    };
    const state = createRuleState();
    const scan = (content: string, s: number, senderId = 8, edit = false) =>
      scanMessage(msg({ content, timestamp: T0 + s, senderId }), rules, state, { edit }).map(
        (m) => m.details,
      );
    const two = "https://a.example https://b.example";
    expect(scan(`${two} https://c.example`, 0)).toEqual(["3 links in one message (limit 2)"]);
    expect(scan(two, 100)).toEqual([]);
    expect(scan(two, 110)).toEqual([]);
    expect(scan(two, 120, 9)).toEqual([]); // another sender
    expect(scan("no links", 125)).toEqual([]);
    expect(scan("`https://in.code` https://x.example", 130)).toEqual(["5 links in 60 s (limit 4)"]);
    expect(scan(two, 140)).toEqual([]); // reported for this window already
    expect(scan(`${two} ${two}`, 150, 8, true)).toEqual(["4 links in one message (limit 2)"]); // an edit: per message only
    expect(scan(two, 300)).toEqual([]); // the window has passed
  });

  it("keywords: whole words and phrases, any case and spacing; repeated_message: one more than allowed", () => {
    const rules = rulesFrom(
      ModerationSettings.parse({
        rules: { keywords: { words: ["scam", "wire transfer"] }, repeated_message: { max_repeats: 2 } },
      }),
    );
    const state = createRuleState();
    const scan = (content: string, s = 0) =>
      rulesOf(scanMessage(msg({ content, timestamp: T0 + s }), rules, state));
    expect(
      ["a SCAM!", "scampi", "rescam", "Wire\n Transfer now", "transfer a wire"].map((c) => scan(c)),
    ).toEqual([["keywords"], [], [], ["keywords"], []]);
    expect([
      scan("Is the build green?", 1),
      scan("is the  BUILD green?", 2),
      scan("Is the build green?", 3),
    ]).toEqual([[], [], ["repeated_message"]]);
    expect(scan("Is the build green?", 700)).toEqual([]); // 600 s window by default
  });

  it("a skipped rule (an exemption) neither reports nor counts the message; other rules still do", () => {
    const rules: Rules = {
      flood: { maxMessages: 1, perSeconds: 60, reportType: "spam" },
      linkFlood: { maxLinks: 2, perSender: { maxLinks: 3, withinSeconds: 60 }, reportType: "spam" },
    };
    const state = createRuleState();
    const links = "https://a.example https://b.example";
    const scan = (s: number, skip: RuleName[] = []) =>
      rulesOf(scanMessage(msg({ content: links, timestamp: T0 + s }), rules, state, { skip: new Set(skip) }));
    expect(scan(0, ["link_flood"])).toEqual([]);
    expect(scan(1, ["flood"])).toEqual([]); // 2 links in the window: the first message's were not counted
    expect(scan(2)).toEqual(["flood", "link_flood"]); // flood: 0 and 2 (1 was skipped); links: 1 and 2
  });

  it("new_member_links: only links, only from members younger than the limit, not inside code", () => {
    const rules: Rules = { newMemberLinks: { minAccountAgeDays: 2, reportType: "spam" } };
    const state = createRuleState();
    const joined = (daysAgo: number) => (T0 - daysAgo * 86_400) * 1000;
    const scan = (content: string, daysAgo?: number) =>
      scanMessage(
        msg({ content, ...(daysAgo !== undefined ? { senderJoinedAtMs: joined(daysAgo) } : {}) }),
        rules,
        state,
      );
    expect(scan("see https://x.example", 1.5)).toEqual([
      {
        rule: "new_member_links",
        reportType: "spam",
        details: "a link from a member who joined 1 day ago (members need 2 days)",
      },
    ]);
    expect(scan("see https://x.example", 2)).toEqual([]);
    expect(scan("see https://x.example")).toEqual([]); // join date unknown
    expect(scan("no link here", 0)).toEqual([]);
    expect(scan("```\nhttps://x.example\n```", 0)).toEqual([]);
  });

  it("blocked_patterns and mass_mentions read the text without code; edits skip the posting rules", () => {
    const rules: Rules = {
      flood: { maxMessages: 0, perSeconds: 10, reportType: "spam" },
      blockedPatterns: { patterns: [{ name: "crypto", regex: /crypto/giu }], reportType: "norms" },
      massMentions: { maxUserMentions: 1, wildcards: false, reportType: "norms" },
    };
    const state = createRuleState();
    const edit = (content: string) => rulesOf(scanMessage(msg({ content }), rules, state, { edit: true }));
    expect(edit("crypto crypto")).toEqual(["blocked_patterns"]);
    expect(edit("crypto again")).toEqual(["blocked_patterns"]); // a g flag does not leak lastIndex
    expect(edit("`crypto` @**all**")).toEqual([]); // wildcards off
    expect(edit("@**A** @**B|7** @_**C**")).toEqual(["mass_mentions"]);
    expect(rulesOf(scanMessage(msg(), rules, state))).toEqual(["flood"]);
  });

  it("keeps memory bounded: old activity is forgotten", () => {
    const rules: Rules = {
      flood: { maxMessages: 100, perSeconds: 10, reportType: "spam" },
      crossPost: { minChannels: 3, withinSeconds: 10, minLength: 1, reportType: "spam" },
    };
    const state = createRuleState();
    for (let i = 0; i < 5000; i++)
      scanMessage(msg({ senderId: i, content: `m${i}`, timestamp: T0 }), rules, state);
    expect(state.recent.size).toBe(5000);
    for (let i = 0; i < 2048; i++)
      scanMessage(msg({ senderId: 1, content: "x", timestamp: T0 + 100 }), rules, state);
    expect(state.recent.size).toBe(1);
    expect(state.posts.size).toBe(1);
  });
});

describe("content and history helpers", () => {
  it("finds links and mentions outside code only", () => {
    expect(hasLink(withoutCode("`https://a.example` and\n~~~\nwww.b.example\n~~~\nafter"))).toBe(false);
    expect(mentions("@**Ann** @**ann** @**Bob|12** @**Bob|12** @**everyone**")).toEqual({
      users: 2,
      wildcard: true,
    });
  });

  it("quotes the original and each content edit, oldest first, cutting long ones", () => {
    const text = describeHistory([
      { content: "hi", timestamp: T0 },
      { content: "hi", timestamp: T0 + 60 }, // a topic move: no prev_content
      { content: `spam ${"x".repeat(300)}`, prev_content: "hi", timestamp: T0 + 300 },
    ]);
    expect(text).toBe(
      `Edit history: original (2023-11-14 22:13 UTC) “hi”; edited 2023-11-14 22:18 UTC to “spam ${"x".repeat(154)}…”.`,
    );
  });
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
