/**
 * The traffic of the seeded moderation history: 320 ordinary messages by default (20–89 s apart, from a
 * fixed pseudo-random sequence) with a scene every 20 of them. Each scene trips a rule, or comes
 * as close as it can without tripping it, and records which in the history's answer key.
 * Gaps are whole seconds, so the seconds between two messages are exact whatever the clock's
 * fraction of a second.
 */
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { ModerationHistory } from "./moderation-history.ts";
import { PEOPLE, type Person, type SeededRule } from "./moderation-history-cast.ts";

const TOPICS = ["standup", "lunch", "release", "questions"];
const PHRASES = [
  "Morning all, picking up the release notes today",
  "The staging deploy looks fine from here",
  "Who has the keys to the meeting room",
  "I pushed a fix for the flaky login test",
  "Lunch options near the office are thin this week",
  "Can we move the retro to Thursday",
  "Thanks, that answers my question",
];
const TALKERS: Person[] = ["ada", "ben", "cleo", "moderator", "announcer", "settled", "newcomer"];

interface Stage {
  post(who: Person, content: string, where?: { to?: string; topic?: string; gap?: number }): Promise<number>;
  /** A direct message to the bot (and to `also`, making it a group DM). */
  dm(who: Person, content: string, also?: Person[], to?: "bot" | "nobody"): Promise<number>;
  trip(rule: SeededRule, id: number): void;
  miss(rule: SeededRule, id: number): void;
  join(who: Person): Promise<void>;
}

export async function playScenes(
  sandbox: Sandbox,
  history: ModerationHistory,
  pace: (seconds: number) => Promise<void>,
  ordinary: number,
): Promise<void> {
  const control = sandbox.control;
  const tick = async (seconds: number) => {
    await pace(seconds);
    control.advanceClock(seconds * 1000);
  };
  const send = (who: Person, input: Parameters<typeof control.sendAs>[1]) => {
    const { id } = control.sendAs(PEOPLE[who].email, input);
    history.messageIds.push(id);
    return id;
  };
  const stage: Stage = {
    async post(who, content, { to = "lobby", topic = "chat", gap = 30 } = {}) {
      await tick(gap);
      return send(who, { type: "stream", to, topic, content });
    },
    async dm(who, content, also = [], to = "bot") {
      await tick(30);
      const others = also.map((p) => PEOPLE[p].email);
      return send(who, {
        type: "direct",
        to: to === "bot" ? [history.bot.email, ...others] : others,
        content,
      });
    },
    trip: (rule, id) => void history.expected[rule].push(id),
    miss: (rule, id) => void history.nearMisses[rule].push(id),
    async join(who) {
      await tick(30);
      const p = PEOPLE[who];
      const user = control.createUser({ email: p.email, full_name: p.fullName, role: p.role });
      history.users[who] = { email: p.email, userId: user.user_id, fullName: p.fullName };
    },
  };
  const random = mulberry32(20_240_601);
  // Scene k follows ordinary message 10 + 20k of 320 (proportionally when there are fewer).
  const slot = (k: number) => Math.floor(((10 + 20 * k) * ordinary) / 320);
  let played = 0;
  for (let i = 0; i < ordinary; i++) {
    const who = TALKERS[Math.floor(random() * TALKERS.length)]!;
    const withLink = i % 13 === 5 && who !== "newcomer" ? ` (https://wiki.history.example/page-${i})` : "";
    const mention = i % 11 === 3 ? "@**Ada Veteran** " : "";
    await stage.post(who, `${mention}${PHRASES[i % PHRASES.length]} (${i})${withLink}`, {
      to: random() < 0.6 ? "lobby" : "offtopic",
      topic: TOPICS[Math.floor(random() * TOPICS.length)]!,
      gap: 20 + Math.floor(random() * 70),
    });
    while (played < SCENES.length && slot(played) === i) await SCENES[played++]!(stage);
  }
  while (played < SCENES.length) await SCENES[played++]!(stage);
}

type Scene = (s: Stage) => Promise<void>;

const SCENES: Scene[] = [
  async function flood(s) {
    // Seven messages a second apart: the sixth is one too many in 10 s; the seventh is the same burst.
    const ids = [];
    for (let k = 1; k <= 7; k++) ids.push(await s.post("ben", `quick one ${k}`, { gap: k === 1 ? 30 : 1 }));
    s.trip("flood", ids[5]!);
    s.miss("flood", ids[6]!);
  },
  async function floodNearMisses(s) {
    // Five within 10 s; then six 2 s apart, whose first has left the window when the sixth comes.
    let last = 0;
    for (let k = 1; k <= 5; k++) last = await s.post("cleo", `short note ${k}`, { gap: k === 1 ? 30 : 1 });
    s.miss("flood", last);
    for (let k = 1; k <= 6; k++) last = await s.post("ada", `thinking aloud ${k}`, { gap: k === 1 ? 30 : 2 });
    s.miss("flood", last);
  },
  async function crossPost(s) {
    const text = "Join my trading group, details in my profile";
    await s.post("ada", text, { to: "lobby" });
    await s.post("ada", text, { to: "offtopic" });
    s.trip("cross_post", await s.post("ada", text.toUpperCase(), { to: "links" }));
  },
  async function crossPostNearMisses(s) {
    // Two channels only; then three channels, the third 130 s after the first (the window is 120 s).
    await s.post("ben", "Has anyone seen the new office plans yet?", { to: "lobby" });
    s.miss(
      "cross_post",
      await s.post("ben", "Has anyone seen the new office plans yet?", { to: "offtopic" }),
    );
    const text = "Reminder: fill in the team survey please";
    await s.post("cleo", text, { to: "lobby" });
    await s.post("cleo", text, { to: "offtopic", gap: 60 });
    s.miss("cross_post", await s.post("cleo", text, { to: "links", gap: 70 }));
  },
  async function repeated(s) {
    // The same text four times (case and spacing aside) in two channels: one more than allowed.
    await s.post("ben", "Can someone review my PR?", { gap: 60 });
    await s.post("ben", "can someone  review my PR?", { to: "offtopic", gap: 60 });
    await s.post("ben", "CAN SOMEONE REVIEW MY PR?", { gap: 60 });
    s.trip("repeated_message", await s.post("ben", "Can someone review my pr?", { gap: 60 }));
    s.miss("repeated_message", await s.post("ben", "can someone review my PR?", { gap: 60 }));
  },
  async function repeatedNearMisses(s) {
    // Three copies; then four, the fourth 610 s after the first (the window is 600 s).
    let last = 0;
    for (let k = 0; k < 3; k++) last = await s.post("cleo", "Is the build green now?", { gap: 60 });
    s.miss("repeated_message", last);
    for (const gap of [30, 200, 200, 210]) last = await s.post("ada", "Lunch at noon anyone?", { gap });
    s.miss("repeated_message", last);
  },
  async function newMemberLinks(s) {
    s.trip("new_member_links", await s.post("newcomer", "Great deals at https://deals.example/1"));
    s.trip("new_member_links", await s.dm("newcomer", "see https://deals.example/2 before it is gone"));
    s.miss("new_member_links", await s.post("settled", "docs: https://docs.history.example/setup"));
    s.miss("new_member_links", await s.post("newcomer", "`https://example.com` is the placeholder we use"));
  },
  async function linkFlood(s) {
    const four = "a https://a.example b https://b.example c https://c.example d https://d.example";
    s.trip("link_flood", await s.post("ada", four));
    s.trip("link_flood", await s.dm("ben", `my bookmarks: ${four}`));
    s.miss("link_flood", await s.post("cleo", "a https://a.example b https://b.example c https://c.example"));
    s.miss("link_flood", await s.post("cleo", four, { to: "links" }));
  },
  async function linksOverTime(s) {
    // Two links at a time: the third message makes six within 300 s; five (2 + 2 + 1) do not.
    let last = 0;
    for (const [k, to] of [
      [1, "lobby"],
      [2, "offtopic"],
      [3, "lobby"],
    ] as const)
      last = await s.post("announcer", `reading list ${k}: https://r${k}a.example https://r${k}b.example`, {
        to,
        gap: 60,
      });
    s.trip("link_flood", last);
    await s.post("settled", "two refs https://s1.example https://s2.example", { gap: 60 });
    await s.post("settled", "two more https://s3.example https://s4.example", { gap: 60 });
    s.miss("link_flood", await s.post("settled", "and https://s5.example", { gap: 60 }));
  },
  async function keywords(s) {
    s.trip("keywords", await s.post("cleo", "this giveaway is a scam"));
    s.miss("keywords", await s.post("ben", "scampi for lunch?"));
    s.trip("keywords", await s.dm("ada", "they asked me for a Wire  Transfer"));
    s.miss("keywords", await s.dm("ada", "how do I transfer a wire?"));
    s.miss("keywords", await s.post("moderator", "that was a scam, removed it"));
    s.miss("keywords", await s.post("cleo", "scam report: handled", { to: "mod-log" }));
    s.miss("keywords", await s.dm("ben", "is this a scam?", ["cleo"], "nobody"));
  },
  async function newAccount(s) {
    await s.join("fresh");
    s.trip("new_member_links", await s.post("fresh", "Hi all, my portfolio: https://fay.example"));
  },
  async function blockedPatterns(s) {
    s.trip("blocked_patterns", await s.post("ben", "FREE   crypto for everyone"));
    s.miss("blocked_patterns", await s.post("cleo", "crypto is never free"));
    s.trip("blocked_patterns", await s.dm("ada", "short link: https://bit.ly/abc", ["ben"]));
    s.miss("blocked_patterns", await s.post("ben", "bitly is a company"));
  },
  async function massMentions(s) {
    const four = "@**Ben Regular** @**Cleo Longtime** @**Sam Settled** @**Nia Newcomer**";
    s.trip("mass_mentions", await s.post("ada", `${four} please review`));
    s.miss("mass_mentions", await s.post("ben", "@**Ada Veteran** @**Cleo Longtime** @**Sam Settled** ping"));
    s.miss("mass_mentions", await s.post("ada", `${four.replaceAll("@**", "@_**")} thanks`));
    s.miss("mass_mentions", await s.post("announcer", "@**all** the release is out"));
    s.trip("mass_mentions", await s.post("cleo", "@**everyone** lunch is here"));
  },
];

/** A small seeded pseudo-random generator (mulberry32): the same numbers on every run. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
