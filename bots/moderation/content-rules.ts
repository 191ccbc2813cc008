/**
 * The moderation rules that look at one message's content alone: links from new members, too
 * many links, blocked words and patterns, mass mentions. Pure, like the posting rules;
 * `scanMessage` (rules.ts) calls them.
 */
import { hasLink, links, mentions } from "./content.ts";
import type { RuleMatch, Rules, ScannedMessage } from "./rule-types.ts";

export function newMemberLink(
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

export function blocked(text: string, rule: NonNullable<Rules["blockedPatterns"]>): RuleMatch | undefined {
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

export function massMentions(text: string, rule: NonNullable<Rules["massMentions"]>): RuleMatch | undefined {
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

export function linkFlood(text: string, rule: NonNullable<Rules["linkFlood"]>): RuleMatch | undefined {
  const n = links(text);
  if (n <= rule.maxLinks) return undefined;
  return {
    rule: "link_flood",
    reportType: rule.reportType,
    details: `${n} links in one message (limit ${rule.maxLinks})`,
  };
}

export function keywords(text: string, rule: NonNullable<Rules["keywords"]>): RuleMatch | undefined {
  const hits = rule.words.filter((w) => w.regex.test(text));
  if (hits.length === 0) return undefined;
  return {
    rule: "keywords",
    reportType: rule.reportType,
    details: `uses ${hits.map((w) => `"${w.word}"`).join(", ")}`,
  };
}
