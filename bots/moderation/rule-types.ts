/**
 * What the moderation rules share: their names and settings, the message they read, what a match
 * reports, and the recent activity the posting rules remember.
 */

export type RuleName =
  | "flood"
  | "cross_post"
  | "repeated_message"
  | "new_member_links"
  | "link_flood"
  | "keywords"
  | "blocked_patterns"
  | "mass_mentions";

/** The rules in effect; a rule left out is off. Report types are keys of the server's report types. */
export interface Rules {
  flood?: { maxMessages: number; perSeconds: number; reportType: string };
  crossPost?: { minChannels: number; withinSeconds: number; minLength: number; reportType: string };
  repeatedMessage?: { maxRepeats: number; withinSeconds: number; minLength: number; reportType: string };
  /** More than `maxLinks` in one message, or (`perSender`) from one sender within a window. */
  linkFlood?: {
    maxLinks: number;
    perSender?: { maxLinks: number; withinSeconds: number };
    reportType: string;
  };
  /** Whole words or phrases, case-insensitive; `regex` is made from `word` by the settings. */
  keywords?: { words: { word: string; regex: RegExp }[]; reportType: string };
  newMemberLinks?: { minAccountAgeDays: number; reportType: string };
  blockedPatterns?: { patterns: { name: string; regex: RegExp }[]; reportType: string };
  massMentions?: { maxUserMentions: number; wildcards: boolean; reportType: string };
}

/** What a rule needs to know about a message. */
export interface ScannedMessage {
  id: number;
  senderId: number;
  /** The channel, or undefined for a direct message (never a cross-post). */
  channelId?: number;
  content: string;
  /** UNIX seconds: when it was sent (or edited). */
  timestamp: number;
  /** When the sender joined (ms since the epoch), if known; needed by new_member_links. */
  senderJoinedAtMs?: number;
}

export interface RuleMatch {
  rule: RuleName;
  reportType: string;
  /** What was found, for the report and the logs, e.g. "6 messages in 10 s (limit 5)". */
  details: string;
}

/** Recent activity the posting rules remember; `createRuleState` (rules.ts) makes one per bot. */
export interface RuleState {
  /** Sender → timestamps of their recent messages (oldest first). */
  recent: Map<number, number[]>;
  /** Sender → until when a flood was already reported (one report per burst). */
  floodReportedUntil: Map<number, number>;
  /** Sender + normalised content → where it was posted (no channel: a direct message), with when. */
  posts: Map<string, { channelId: number | undefined; at: number }[]>;
  /** Sender + normalised content → until when the cross-post was already reported. */
  crossPostReportedUntil: Map<string, number>;
  /** Sender + normalised content → until when the repetition was already reported. */
  repeatReportedUntil: Map<string, number>;
  /** Sender → their recent messages with links: when, and how many links. */
  links: Map<number, { at: number; n: number }[]>;
  /** Sender → until when their links over the window were already reported. */
  linkFloodReportedUntil: Map<number, number>;
  /**
   * Message id → what its scan found, and when it was sent: a run again of its handler (a retry
   * after an action failed) gets the same rules back, its message not counted twice.
   */
  scanned: Map<number, { at: number; matches: RuleMatch[] }>;
  scans: number;
}
