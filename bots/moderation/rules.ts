/**
 * The moderation rule engine: pure functions over one message and a small state, so it can be
 * tested and benchmarked without a server. `scanMessage` returns every rule the message breaks.
 *
 * Rules: message floods per sender (more than N messages in T seconds), links from new members
 * (joined less than D days ago), blocked patterns, the same message cross-posted to several
 * channels within T seconds, and mass mentions (more than N users, or a wildcard). Edits are
 * scanned with the content rules only (a flood or a cross-post is about posting, not editing).
 */
import { withoutCode } from "./content.ts";
import { blocked, keywords, linkFlood, massMentions, newMemberLink } from "./content-rules.ts";
import { crossPost, flood, linkWindow, remember, repeated, sweep } from "./posting-rules.ts";
import type { RuleMatch, RuleName, RuleState, Rules, ScannedMessage } from "./rule-types.ts";

/** A fresh {@link RuleState}, empty: one per bot. */
export function createRuleState(): RuleState {
  return {
    recent: new Map(),
    floodReportedUntil: new Map(),
    posts: new Map(),
    crossPostReportedUntil: new Map(),
    repeatReportedUntil: new Map(),
    links: new Map(),
    linkFloodReportedUntil: new Map(),
    scanned: new Map(),
    scans: 0,
  };
}

/**
 * Every rule `message` breaks, in a fixed order (flood, cross_post, repeated_message,
 * new_member_links, link_flood, keywords, blocked_patterns, mass_mentions). For new messages
 * (`edit: false`) it also records the message in `state` for the posting rules; rules in `skip`
 * are left out entirely. A new message scanned again (its handler runs again) gets what its first
 * scan found: counted once, and a burst it was reported for is still its.
 *
 * @example
 * ```ts
 * const state = createRuleState();
 * const rules = { flood: { maxMessages: 5, perSeconds: 10, reportType: "spam" } };
 * scanMessage({ id: 1, senderId: 8, channelId: 5, content: "hi", timestamp: 1_700_000_000 }, rules, state);
 * // [] until the sixth message within 10 s: [{ rule: "flood", reportType: "spam", details: "6 messages in 10 s (limit 5)" }]
 * ```
 */
export function scanMessage(
  message: ScannedMessage,
  rules: Rules,
  state: RuleState,
  options: { edit?: boolean; skip?: ReadonlySet<RuleName> } = {},
): RuleMatch[] {
  // A skipped rule (the sender or channel is exempt from it) neither reports nor counts the message.
  const on = <R>(name: RuleName, rule: R | undefined): R | undefined =>
    options.skip?.has(name) ? undefined : rule;
  const matches: RuleMatch[] = [];
  const t = message.timestamp;
  if (!options.edit) {
    const earlier = state.scanned.get(message.id);
    if (earlier) return earlier.matches.map((m) => ({ ...m }));
    if (++state.scans % 1024 === 0) sweep(state, t, rules);
    const floodRule = on("flood", rules.flood);
    if (floodRule) pushIf(matches, flood(message, floodRule, state));
    const crossPostRule = on("cross_post", rules.crossPost);
    const repeatedRule = on("repeated_message", rules.repeatedMessage);
    if (crossPostRule || repeatedRule) remember(message, rules, state);
    if (crossPostRule) pushIf(matches, crossPost(message, crossPostRule, state));
    if (repeatedRule) pushIf(matches, repeated(message, repeatedRule, state));
  }
  const text = withoutCode(message.content);
  const newMember = on("new_member_links", rules.newMemberLinks);
  if (newMember) pushIf(matches, newMemberLink(message, text, newMember));
  const linkRule = on("link_flood", rules.linkFlood);
  if (linkRule) {
    const { perSender, reportType } = linkRule;
    const inOne = linkFlood(text, linkRule);
    const overTime = perSender && !options.edit ? linkWindow(message, text, perSender, state) : undefined;
    pushIf(matches, inOne ?? (overTime ? { rule: "link_flood", reportType, details: overTime } : undefined));
  }
  const words = on("keywords", rules.keywords);
  if (words) pushIf(matches, keywords(text, words));
  const patterns = on("blocked_patterns", rules.blockedPatterns);
  if (patterns) pushIf(matches, blocked(text, patterns));
  const mentionRule = on("mass_mentions", rules.massMentions);
  if (mentionRule) pushIf(matches, massMentions(text, mentionRule));
  if (!options.edit && countsPosts(rules)) state.scanned.set(message.id, { at: t, matches: [...matches] });
  return matches;
}

/** Whether a rule counts messages over a window (a second scan of one message would count it twice). */
export function countsPosts(rules: Rules): boolean {
  return Boolean(rules.flood || rules.crossPost || rules.repeatedMessage || rules.linkFlood?.perSender);
}

function pushIf(list: RuleMatch[], match: RuleMatch | undefined): void {
  if (match) list.push(match);
}
