/**
 * The moderation rule engine: pure functions over one message and a small state, so it can be
 * tested and benchmarked without a server. `scanMessage` returns every rule the message breaks.
 *
 * Rules: message floods per sender (more than N messages in T seconds), links from new members
 * (joined less than D days ago), blocked patterns, the same message cross-posted to several
 * channels within T seconds, and mass mentions (more than N users, or a wildcard). Edits are
 * scanned with the content rules only (a flood or a cross-post is about posting, not editing).
 */
import { normalized, withoutCode } from "./content.ts";
import { blocked, keywords, linkFlood, massMentions, newMemberLink } from "./content-rules.ts";

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
  linkFlood?: { maxLinks: number; reportType: string };
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
  streamId?: number;
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

/** Recent activity the posting rules remember; create one per bot with {@link createRuleState}. */
export interface RuleState {
  /** Sender → timestamps of their recent messages (oldest first). */
  recent: Map<number, number[]>;
  /** Sender → until when a flood was already reported (one report per burst). */
  floodReportedUntil: Map<number, number>;
  /** Sender + normalised content → where it was posted (no channel: a direct message), with when. */
  posts: Map<string, { streamId: number | undefined; at: number }[]>;
  /** Sender + normalised content → until when the cross-post was already reported. */
  crossPostReportedUntil: Map<string, number>;
  /** Sender + normalised content → until when the repetition was already reported. */
  repeatReportedUntil: Map<string, number>;
  scans: number;
}

export function createRuleState(): RuleState {
  return {
    recent: new Map(),
    floodReportedUntil: new Map(),
    posts: new Map(),
    crossPostReportedUntil: new Map(),
    repeatReportedUntil: new Map(),
    scans: 0,
  };
}

/**
 * Every rule `message` breaks, in a fixed order (flood, cross_post, repeated_message,
 * new_member_links, link_flood, keywords, blocked_patterns, mass_mentions). For new messages (`edit: false`) it also records the message
 * in `state` for the posting rules.
 *
 * @example
 * ```ts
 * const state = createRuleState();
 * const rules = { flood: { maxMessages: 5, perSeconds: 10, reportType: "spam" } };
 * scanMessage({ id: 1, senderId: 8, streamId: 5, content: "hi", timestamp: 1_700_000_000 }, rules, state);
 * // [] until the sixth message within 10 s: [{ rule: "flood", reportType: "spam", details: "6 messages in 10 s (limit 5)" }]
 * ```
 */
export function scanMessage(
  message: ScannedMessage,
  rules: Rules,
  state: RuleState,
  options: { edit?: boolean } = {},
): RuleMatch[] {
  const matches: RuleMatch[] = [];
  const t = message.timestamp;
  if (!options.edit) {
    if (++state.scans % 1024 === 0) sweep(state, t, rules);
    if (rules.flood) pushIf(matches, flood(message, rules.flood, state));
    if (rules.crossPost || rules.repeatedMessage) remember(message, rules, state);
    if (rules.crossPost) pushIf(matches, crossPost(message, rules.crossPost, state));
    if (rules.repeatedMessage) pushIf(matches, repeated(message, rules.repeatedMessage, state));
  }
  const text = withoutCode(message.content);
  if (rules.newMemberLinks) pushIf(matches, newMemberLink(message, text, rules.newMemberLinks));
  if (rules.linkFlood) pushIf(matches, linkFlood(text, rules.linkFlood));
  if (rules.keywords) pushIf(matches, keywords(text, rules.keywords));
  if (rules.blockedPatterns) pushIf(matches, blocked(text, rules.blockedPatterns));
  if (rules.massMentions) pushIf(matches, massMentions(text, rules.massMentions));
  return matches;
}

function pushIf(list: RuleMatch[], match: RuleMatch | undefined): void {
  if (match) list.push(match);
}

function flood(
  m: ScannedMessage,
  rule: NonNullable<Rules["flood"]>,
  state: RuleState,
): RuleMatch | undefined {
  const since = m.timestamp - rule.perSeconds;
  const times = (state.recent.get(m.senderId) ?? []).filter((at) => at > since);
  times.push(m.timestamp);
  state.recent.set(m.senderId, times);
  // Messages sent after this one (handled first, e.g. from another conversation) do not count.
  const count = times.filter((at) => at <= m.timestamp).length;
  if (count <= rule.maxMessages) return undefined;
  if ((state.floodReportedUntil.get(m.senderId) ?? -1) > m.timestamp) return undefined;
  state.floodReportedUntil.set(m.senderId, m.timestamp + rule.perSeconds);
  return {
    rule: "flood",
    reportType: rule.reportType,
    details: `${count} messages in ${rule.perSeconds} s (limit ${rule.maxMessages})`,
  };
}

/** Record a new message under its sender and normalised text (for cross_post, repeated_message). */
function remember(m: ScannedMessage, rules: Rules, state: RuleState): void {
  const text = normalized(m.content);
  const minLength = Math.min(
    rules.crossPost?.minLength ?? Infinity,
    rules.repeatedMessage?.minLength ?? Infinity,
  );
  if ([...text].length < minLength) return;
  const key = `${m.senderId}\u0000${text}`;
  const since = m.timestamp - postWindow(rules);
  const posts = (state.posts.get(key) ?? []).filter((p) => p.at > since);
  posts.push({ streamId: m.streamId, at: m.timestamp });
  state.posts.set(key, posts);
}

function postWindow(rules: Rules): number {
  return Math.max(rules.crossPost?.withinSeconds ?? 0, rules.repeatedMessage?.withinSeconds ?? 0);
}

/**
 * The sender's posts of this message's text within `seconds` up to this one, or undefined if too
 * short. Later posts (handled first, e.g. from another conversation) do not count.
 */
function recentPosts(m: ScannedMessage, seconds: number, minLength: number, state: RuleState) {
  const text = normalized(m.content);
  if ([...text].length < minLength) return undefined;
  const key = `${m.senderId}\u0000${text}`;
  const since = m.timestamp - seconds;
  return { key, posts: (state.posts.get(key) ?? []).filter((p) => p.at > since && p.at <= m.timestamp) };
}

function crossPost(
  m: ScannedMessage,
  rule: NonNullable<Rules["crossPost"]>,
  state: RuleState,
): RuleMatch | undefined {
  if (m.streamId === undefined) return undefined;
  const recent = recentPosts(m, rule.withinSeconds, rule.minLength, state);
  if (!recent) return undefined;
  const channels = new Set(recent.posts.flatMap((p) => (p.streamId === undefined ? [] : [p.streamId]))).size;
  if (channels < rule.minChannels) return undefined;
  if ((state.crossPostReportedUntil.get(recent.key) ?? -1) > m.timestamp) return undefined;
  state.crossPostReportedUntil.set(recent.key, m.timestamp + rule.withinSeconds);
  return {
    rule: "cross_post",
    reportType: rule.reportType,
    details: `the same message in ${channels} channels within ${rule.withinSeconds} s`,
  };
}

function repeated(
  m: ScannedMessage,
  rule: NonNullable<Rules["repeatedMessage"]>,
  state: RuleState,
): RuleMatch | undefined {
  const recent = recentPosts(m, rule.withinSeconds, rule.minLength, state);
  if (!recent || recent.posts.length <= rule.maxRepeats) return undefined;
  if ((state.repeatReportedUntil.get(recent.key) ?? -1) > m.timestamp) return undefined;
  state.repeatReportedUntil.set(recent.key, m.timestamp + rule.withinSeconds);
  return {
    rule: "repeated_message",
    reportType: rule.reportType,
    details: `the same message ${recent.posts.length} times within ${rule.withinSeconds} s (limit ${rule.maxRepeats})`,
  };
}

/** Forget activity older than every window, so memory stays bounded by recent traffic. */
function sweep(state: RuleState, now: number, rules: Rules): void {
  const floodSince = now - (rules.flood?.perSeconds ?? 0);
  for (const [sender, times] of state.recent) {
    if ((times.at(-1) ?? -Infinity) <= floodSince) state.recent.delete(sender);
  }
  for (const [sender, until] of state.floodReportedUntil)
    if (until <= now) state.floodReportedUntil.delete(sender);
  const postSince = now - postWindow(rules);
  for (const [key, posts] of state.posts) {
    if ((posts.at(-1)?.at ?? -Infinity) <= postSince) state.posts.delete(key);
  }
  for (const reported of [state.crossPostReportedUntil, state.repeatReportedUntil]) {
    for (const [key, until] of reported) if (until <= now) reported.delete(key);
  }
}
