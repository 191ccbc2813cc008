/**
 * Who and where the seeded moderation history happens (see moderation-history.ts), and the bot
 * settings its answer key assumes.
 */
import type { RuleName } from "../../bots/moderation/rule-types.ts";

const DAY = 86_400_000;

/**
 * The rules by the names the bot reports and logs (`mention_storm` is reported as
 * `mass_mentions`): the bot's own list, so the answer key must cover every rule it has.
 */
export type SeededRule = RuleName;

export interface CastMember {
  email: string;
  fullName: string;
  role: "moderator" | "member";
  /** How long before the seeding started the account joined. */
  joinedAgoMs: number;
  /** Created during the traffic (joined at that moment) instead of before it. */
  joinsMidway?: true;
}

export const PEOPLE = {
  moderator: {
    email: "mona@history.example",
    fullName: "Mona Moderator",
    role: "moderator",
    joinedAgoMs: 900 * DAY,
  },
  ada: { email: "ada@history.example", fullName: "Ada Veteran", role: "member", joinedAgoMs: 700 * DAY },
  ben: { email: "ben@history.example", fullName: "Ben Regular", role: "member", joinedAgoMs: 400 * DAY },
  cleo: { email: "cleo@history.example", fullName: "Cleo Longtime", role: "member", joinedAgoMs: 250 * DAY },
  /** Exempt from the mention rule by email: the one who announces things to everyone. */
  announcer: {
    email: "andy@history.example",
    fullName: "Andy Announcer",
    role: "member",
    joinedAgoMs: 500 * DAY,
  },
  /** Joined three days and an hour before the traffic: just old enough to post links. */
  settled: {
    email: "sam@history.example",
    fullName: "Sam Settled",
    role: "member",
    joinedAgoMs: 3 * DAY + 3_600_000,
  },
  /** Joined a day before the traffic. */
  newcomer: { email: "nia@history.example", fullName: "Nia Newcomer", role: "member", joinedAgoMs: DAY },
  /** Signs up in the middle of the traffic. */
  fresh: {
    email: "fay@history.example",
    fullName: "Fay Fresh",
    role: "member",
    joinedAgoMs: 0,
    joinsMidway: true,
  },
} as const satisfies Record<string, CastMember>;
export type Person = keyof typeof PEOPLE;

/** Seeded channels: two for chat, one where links are welcome, one for the bot's notices. */
export const CHANNELS = ["lobby", "offtopic", "links", "mod-log"] as const;

/**
 * The moderation bot's `settings:` the expectations assume. Every rule reports (mention_storm
 * with its own reason); link_flood also replies, keywords also tells the sender,
 * blocked_patterns also notifies #mod-log > flags.
 */
export const HISTORY_SETTINGS = {
  exempt: { channels: ["mod-log"] },
  rules: {
    flood: { max_messages: 5, per_seconds: 10 },
    cross_post: { min_channels: 3, within_seconds: 120, min_length: 20 },
    repeated_message: { max_repeats: 3, within_seconds: 600, min_length: 10 },
    new_member_links: { min_account_age_days: 3 },
    link_flood: {
      max_links: 3,
      per_sender: { max_links: 5, within_seconds: 300 },
      exempt: { channels: ["links"] },
      actions: ["report", { reply: "Please keep it to a few links, {{name}}." }],
    },
    keywords: {
      words: ["scam", "wire transfer"],
      actions: ["report", { dm_sender: "Your message {{link}} was sent to the moderators: {{details}}." }],
    },
    blocked_patterns: {
      patterns: ["free\\s+crypto", { pattern: "\\bbit\\.ly/", name: "link shortener" }],
      actions: [
        "report",
        {
          notify_channel: {
            channel: "mod-log",
            topic: "flags",
            content: "{{rules}} by {{name}} in {{channel}}: {{link}}",
          },
        },
      ],
    },
    mention_storm: {
      max_user_mentions: 3,
      wildcards: true,
      exempt: { users: [PEOPLE.announcer.email] },
      actions: [{ report: { reason: "Mention storm in {{channel}}: {{details}}" } }],
    },
  },
};
