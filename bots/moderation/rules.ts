/**
 * The moderation rule engine: pure functions over one message and a small state, so it can be
 * tested and benchmarked without a server. `scanMessage` returns every rule the message breaks.
 *
 * Rules: message floods per sender (more than N messages in T seconds), links from new members
 * (joined less than D days ago), blocked patterns, the same message cross-posted to several
 * channels within T seconds, and mass mentions (more than N users, or a wildcard). Edits are
 * scanned with the content rules only (a flood or a cross-post is about posting, not editing).
 */
import { hasLink, mentions, normalized, withoutCode } from "./content.ts";

export type RuleName = "flood" | "cross_post" | "new_member_links" | "blocked_patterns" | "mass_mentions";

/** The rules in effect; a rule left out is off. Report types are keys of the server's report types. */
export interface Rules {
  flood?: { maxMessages: number; perSeconds: number; reportType: string };
  crossPost?: { minChannels: number; withinSeconds: number; minLength: number; reportType: string };
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
  /** Sender + normalised content → the channels it was posted to, with when. */
  posts: Map<string, { streamId: number; at: number }[]>;
  /** Sender + normalised content → until when the cross-post was already reported. */
  crossPostReportedUntil: Map<string, number>;
  scans: number;
}

export function createRuleState(): RuleState {
  return {
    recent: new Map(),
    floodReportedUntil: new Map(),
    posts: new Map(),
    crossPostReportedUntil: new Map(),
    scans: 0,
  };
}

/**
 * Every rule `message` breaks, in a fixed order (flood, cross_post, new_member_links,
 * blocked_patterns, mass_mentions). For new messages (`edit: false`) it also records the message
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
    if (rules.crossPost) pushIf(matches, crossPost(message, rules.crossPost, state));
  }
  const text = withoutCode(message.content);
  if (rules.newMemberLinks) pushIf(matches, newMemberLink(message, text, rules.newMemberLinks));
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
  if (times.length <= rule.maxMessages) return undefined;
  if ((state.floodReportedUntil.get(m.senderId) ?? -1) > m.timestamp) return undefined;
  state.floodReportedUntil.set(m.senderId, m.timestamp + rule.perSeconds);
  return {
    rule: "flood",
    reportType: rule.reportType,
    details: `${times.length} messages in ${rule.perSeconds} s (limit ${rule.maxMessages})`,
  };
}

function crossPost(
  m: ScannedMessage,
  rule: NonNullable<Rules["crossPost"]>,
  state: RuleState,
): RuleMatch | undefined {
  if (m.streamId === undefined) return undefined;
  const text = normalized(m.content);
  if ([...text].length < rule.minLength) return undefined;
  const key = `${m.senderId}\u0000${text}`;
  const since = m.timestamp - rule.withinSeconds;
  const posts = (state.posts.get(key) ?? []).filter((p) => p.at > since);
  posts.push({ streamId: m.streamId, at: m.timestamp });
  state.posts.set(key, posts);
  const channels = new Set(posts.map((p) => p.streamId)).size;
  if (channels < rule.minChannels) return undefined;
  if ((state.crossPostReportedUntil.get(key) ?? -1) > m.timestamp) return undefined;
  state.crossPostReportedUntil.set(key, m.timestamp + rule.withinSeconds);
  return {
    rule: "cross_post",
    reportType: rule.reportType,
    details: `the same message in ${channels} channels within ${rule.withinSeconds} s`,
  };
}

function newMemberLink(
  m: ScannedMessage,
  text: string,
  rule: NonNullable<Rules["newMemberLinks"]>,
): RuleMatch | undefined {
  if (m.senderJoinedAtMs === undefined || !hasLink(text)) return undefined;
  const ageDays = (m.timestamp * 1000 - m.senderJoinedAtMs) / 86_400_000;
  if (ageDays >= rule.minAccountAgeDays) return undefined;
  const [n, unit] =
    ageDays < 1 ? [Math.max(0, Math.floor(ageDays * 24)), "hour"] : [Math.floor(ageDays), "day"];
  const age = `${n} ${unit}${n === 1 ? "" : "s"}`;
  return {
    rule: "new_member_links",
    reportType: rule.reportType,
    details: `a link from a member who joined ${age} ago (members need ${rule.minAccountAgeDays} days)`,
  };
}

function blocked(text: string, rule: NonNullable<Rules["blockedPatterns"]>): RuleMatch | undefined {
  const hits = rule.patterns.filter((p) => {
    p.regex.lastIndex = 0; // a pattern given the g or y flag keeps state between calls
    return p.regex.test(text);
  });
  if (hits.length === 0) return undefined;
  return {
    rule: "blocked_patterns",
    reportType: rule.reportType,
    details: `matches blocked pattern ${hits.map((p) => `"${p.name}"`).join(", ")}`,
  };
}

function massMentions(text: string, rule: NonNullable<Rules["massMentions"]>): RuleMatch | undefined {
  const found = mentions(text);
  const tooMany = found.users > rule.maxUserMentions;
  const wildcard = rule.wildcards && found.wildcard;
  if (!tooMany && !wildcard) return undefined;
  const parts = [
    ...(tooMany ? [`${found.users} users mentioned (limit ${rule.maxUserMentions})`] : []),
    ...(wildcard ? ["a wildcard mention (@all, @everyone, @channel or @topic)"] : []),
  ];
  return { rule: "mass_mentions", reportType: rule.reportType, details: parts.join(" and ") };
}

/** Forget activity older than every window, so memory stays bounded by recent traffic. */
function sweep(state: RuleState, now: number, rules: Rules): void {
  const floodSince = now - (rules.flood?.perSeconds ?? 0);
  for (const [sender, times] of state.recent) {
    if ((times.at(-1) ?? -Infinity) <= floodSince) state.recent.delete(sender);
  }
  for (const [sender, until] of state.floodReportedUntil)
    if (until <= now) state.floodReportedUntil.delete(sender);
  const postSince = now - (rules.crossPost?.withinSeconds ?? 0);
  for (const [key, posts] of state.posts) {
    if ((posts.at(-1)?.at ?? -Infinity) <= postSince) state.posts.delete(key);
  }
  for (const [key, until] of state.crossPostReportedUntil)
    if (until <= now) state.crossPostReportedUntil.delete(key);
}
