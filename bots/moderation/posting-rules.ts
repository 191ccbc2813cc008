/**
 * The moderation rules about posting rather than content: floods, cross-posts, repeated messages
 * and links per sender over a window. Pure, over the {@link RuleState} that scanMessage keeps;
 * time is the messages' own timestamps. A message sent after the one being scanned (handled
 * first, e.g. from another conversation) never counts toward it.
 */
import { links, normalized } from "./content.ts";
import type { RuleMatch, RuleState, Rules, ScannedMessage } from "./rule-types.ts";

export function flood(
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
export function remember(m: ScannedMessage, rules: Rules, state: RuleState): void {
  const text = normalized(m.content);
  const minLength = Math.min(
    rules.crossPost?.minLength ?? Infinity,
    rules.repeatedMessage?.minLength ?? Infinity,
  );
  if ([...text].length < minLength) return;
  const key = `${m.senderId}\u0000${text}`;
  const since = m.timestamp - postWindow(rules);
  const posts = (state.posts.get(key) ?? []).filter((p) => p.at > since);
  posts.push({ channelId: m.channelId, at: m.timestamp });
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

export function crossPost(
  m: ScannedMessage,
  rule: NonNullable<Rules["crossPost"]>,
  state: RuleState,
): RuleMatch | undefined {
  if (m.channelId === undefined) return undefined;
  const recent = recentPosts(m, rule.withinSeconds, rule.minLength, state);
  if (!recent) return undefined;
  const channels = new Set(recent.posts.flatMap((p) => (p.channelId === undefined ? [] : [p.channelId])))
    .size;
  if (channels < rule.minChannels) return undefined;
  if ((state.crossPostReportedUntil.get(recent.key) ?? -1) > m.timestamp) return undefined;
  state.crossPostReportedUntil.set(recent.key, m.timestamp + rule.withinSeconds);
  return {
    rule: "cross_post",
    reportType: rule.reportType,
    details: `the same message in ${channels} channels within ${rule.withinSeconds} s`,
  };
}

export function repeated(
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

/**
 * link_flood's `per_sender` limit: records this message's links and returns what was found when
 * the sender's links within the window pass the limit (once per window), else undefined.
 */
export function linkWindow(
  m: ScannedMessage,
  text: string,
  rule: { maxLinks: number; withinSeconds: number },
  state: RuleState,
): string | undefined {
  const n = links(text);
  if (n === 0) return undefined;
  const since = m.timestamp - rule.withinSeconds;
  const recent = (state.links.get(m.senderId) ?? []).filter((l) => l.at > since);
  recent.push({ at: m.timestamp, n });
  state.links.set(m.senderId, recent);
  const total = recent.reduce((sum, l) => sum + (l.at <= m.timestamp ? l.n : 0), 0);
  if (total <= rule.maxLinks) return undefined;
  if ((state.linkFloodReportedUntil.get(m.senderId) ?? -1) > m.timestamp) return undefined;
  state.linkFloodReportedUntil.set(m.senderId, m.timestamp + rule.withinSeconds);
  return `${total} links in ${rule.withinSeconds} s (limit ${rule.maxLinks})`;
}

/** How long a message's scan is kept for a run again of its handler (retries last seconds to minutes). */
const RESCAN_SECONDS = 3600;

/** Forget activity older than every window, so memory stays bounded by recent traffic. */
export function sweep(state: RuleState, now: number, rules: Rules): void {
  for (const [id, { at }] of state.scanned) if (at <= now - RESCAN_SECONDS) state.scanned.delete(id);
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
  const linkSince = now - (rules.linkFlood?.perSender?.withinSeconds ?? 0);
  for (const [sender, list] of state.links) {
    if ((list.at(-1)?.at ?? -Infinity) <= linkSince) state.links.delete(sender);
  }
  const reportedUntil: Map<string | number, number>[] = [
    state.crossPostReportedUntil,
    state.repeatReportedUntil,
    state.linkFloodReportedUntil,
  ];
  for (const reported of reportedUntil) {
    for (const [key, until] of reported) if (until <= now) reported.delete(key);
  }
}
