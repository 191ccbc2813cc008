/**
 * The moderation bot's settings (zod), and their translation into the rule engine's {@link Rules}.
 * Regular expressions are compiled here, so a bad one is reported at its config line.
 */
import { channelSetting, parseTemplate } from "bothost";
import { z } from "zod";
import type { RuleName, Rules } from "./rule-types.ts";

/** Role names as the config spells them → the server's role numbers. */
export const ROLES = { owner: 100, admin: 200, moderator: 300, member: 400, guest: 600 } as const;

/** Placeholders the messages of the actions may use. */
export const TEMPLATE_FIELDS = ["name", "rules", "details", "channel", "topic", "where", "link"] as const;

/**
 * The server's report types (`server_report_message_types`, the same five on every server that
 * reports): a typo is refused at its config line, not by each report the rule makes.
 */
export const REPORT_TYPES = ["spam", "harassment", "inappropriate", "norms", "other"] as const;

const reportType = (fallback: (typeof REPORT_TYPES)[number]) => z.enum(REPORT_TYPES).default(fallback);
const whole = (min: number, fallback: number) => z.number().int().min(min).default(fallback);

/** A regular expression: a string (case-insensitive), or `{ pattern, flags, name }`. */
const Pattern = z
  .union([
    z.string().min(1),
    z.object({
      pattern: z.string().min(1),
      /** JavaScript flags; default "i". `g` and `y` are not allowed (they make tests stateful). */
      flags: z
        .string()
        .superRefine((flags, ctx) => {
          const problem = flagProblem(flags);
          if (problem) ctx.addIssue({ code: "custom", message: problem });
        })
        .default("i"),
      /** Named in reports instead of the pattern itself (which may be long or reveal too much). */
      name: z.string().trim().min(1).optional(),
    }),
  ])
  .transform((p, ctx) => {
    const { pattern, flags, name } = typeof p === "string" ? { pattern: p, flags: "i", name: undefined } : p;
    try {
      return { name: name ?? pattern, regex: new RegExp(pattern, flags) };
    } catch (err) {
      ctx.addIssue({
        code: "custom",
        message: `is not a valid regular expression: ${(err as Error).message}`,
      });
      return z.NEVER;
    }
  });

/** What is wrong with a pattern's flags, naming the flags at fault; undefined when nothing is. */
function flagProblem(flags: string): string | undefined {
  const chars = [...flags];
  const list = (xs: string[]) => [...new Set(xs)].join(" and ");
  const unknown = chars.filter((c) => !"imsuvgy".includes(c));
  const stateful = chars.filter((c) => c === "g" || c === "y");
  const parts = [
    ...(unknown.length > 0
      ? [`${list(unknown)} ${unknown.length > 1 ? "are not flags" : "is not a flag"}`]
      : []),
    ...(stateful.length > 0 ? [`${list(stateful)} would make each test depend on the one before`] : []),
  ];
  if (parts.length > 0) return `may only use the flags i, m, s, u and v: ${parts.join("; ")}`;
  const twice = chars.filter((c, i) => chars.indexOf(c) !== i);
  if (twice.length > 0) return `has ${list(twice)} more than once`;
  if (flags.includes("u") && flags.includes("v"))
    return "has both u and v: keep one (v is u with set notation)";
  return undefined;
}

/** A message text with `{{name}}` placeholders (see TEMPLATE_FIELDS); the old `{name}` is refused. */
const Template = z
  .string()
  .trim()
  .min(1)
  .superRefine((text, ctx) => {
    for (const message of parseTemplate(text, TEMPLATE_FIELDS).problems)
      ctx.addIssue({ code: "custom", message });
  });

/** Who or where a rule (or, at the top, every rule) does not apply to. */
const Exempt = z.object({
  roles: z.array(z.enum(Object.keys(ROLES) as [keyof typeof ROLES])).optional(),
  /** Channel names or ids. */
  channels: z.array(channelSetting()).default([]),
  /** User ids or emails. */
  users: z.array(z.union([z.string().trim().min(1), z.number().int().positive()])).default([]),
});

/**
 * What a rule does when a message breaks it: `report` (with a `reason` template in place of the
 * default description), `reply` in the conversation, `dm_sender`, `notify_channel`.
 */
const Action = z.union(
  [
    z.literal("report"),
    z.strictObject({ report: z.strictObject({ reason: Template }) }),
    z.strictObject({ reply: Template }),
    z.strictObject({ dm_sender: Template }),
    z.strictObject({
      notify_channel: z.strictObject({
        channel: channelSetting(z.string().trim().min(1)),
        topic: z.string().trim().min(1).default("moderation"),
        content: Template,
      }),
    }),
  ],
  {
    error: (issue) => {
      const keys = isMapping(issue.input)
        ? Object.keys(issue.input).filter((k) => ACTION_KEYS.includes(k))
        : [];
      if (keys.length > 1)
        return `holds ${keys.length} actions (${keys.join(", ")}): give each its own entry in the list`;
      return "must be report, { report: { reason } }, { reply: text }, { dm_sender: text } or { notify_channel: { channel, topic, content } }";
    },
  },
);

const ACTION_KEYS = ["report", "reply", "dm_sender", "notify_channel"];

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
export type Action = z.output<typeof Action>;

/** What every rule takes besides its thresholds. */
const common = (type: (typeof REPORT_TYPES)[number]) => ({
  report_type: reportType(type),
  exempt: Exempt.optional(),
  /** Default: report. */
  actions: z.array(Action).min(1).optional(),
});

export const ModerationSettings = z.object({
  /** Moved: the bot-level `dry_run: true` captures every write (reports and messages alike). */
  dry_run: z
    .unknown()
    .refine(() => false, {
      error:
        "is no longer a moderation setting: set dry_run: true on the bot itself (beside module and email), which captures every write instead of making it",
    })
    .optional(),
  /** Scan edited messages too (content rules only), quoting the edit history in the report. */
  check_edits: z.boolean().default(true),
  /** A direct message to the sender after a report; omit to send none. */
  notify_sender: Template.optional(),
  exempt: z
    .object({
      roles: z
        .array(z.enum(Object.keys(ROLES) as [keyof typeof ROLES]))
        .default(["owner", "admin", "moderator"]),
      /** Channel names or ids whose messages are never checked. */
      channels: z.array(channelSetting()).default([]),
      /** User ids or emails whose messages are never checked (emails: see exempt-users.ts). */
      users: z.array(z.union([z.string().trim().min(1), z.number().int().positive()])).default([]),
      /** Never check messages from bots. */
      bots: z.boolean().default(true),
    })
    .prefault({}),
  rules: z
    .object({
      flood: z
        .object({
          max_messages: whole(1, 5),
          per_seconds: whole(1, 10),
          ...common("spam"),
        })
        .optional(),
      cross_post: z
        .object({
          min_channels: whole(2, 3),
          within_seconds: whole(1, 120),
          /** Shorter messages ("thanks!") are never treated as cross-posts. */
          min_length: whole(1, 20),
          ...common("spam"),
        })
        .optional(),
      repeated_message: z
        .object({
          /** How often one sender may post the same text within the window; one more trips. */
          max_repeats: whole(1, 3),
          within_seconds: whole(1, 600),
          min_length: whole(1, 10),
          ...common("spam"),
        })
        .optional(),
      new_member_links: z
        .object({ min_account_age_days: z.number().positive().default(3), ...common("spam") })
        .optional(),
      link_flood: z
        .object({
          /** Links allowed in one message. */
          max_links: whole(1, 5),
          /** Links allowed from one sender within a window, across messages and channels. */
          per_sender: z.object({ max_links: whole(1, 10), within_seconds: whole(1, 300) }).optional(),
          ...common("spam"),
        })
        .optional(),
      keywords: z.object({ words: z.array(z.string().trim().min(1)).min(1), ...common("norms") }).optional(),
      blocked_patterns: z.object({ patterns: z.array(Pattern).min(1), ...common("norms") }).optional(),
      mass_mentions: z
        .object({
          max_user_mentions: whole(1, 10),
          wildcards: z.boolean().default(true),
          ...common("norms"),
        })
        .optional(),
      /** Another name for mass_mentions. */
      mention_storm: z
        .object({
          max_user_mentions: whole(1, 10),
          wildcards: z.boolean().default(true),
          ...common("norms"),
        })
        .optional(),
    })
    .refine((r) => !(r.mass_mentions && r.mention_storm), {
      error: "has both mass_mentions and mention_storm (two names of one rule): keep one",
    })
    .refine((r) => Object.values(r).some((v) => v !== undefined), {
      error:
        "turns no rule on: add at least one of flood, cross_post, repeated_message, new_member_links, link_flood, keywords, blocked_patterns, mass_mentions",
    }),
});

export type ModerationSettings = z.output<typeof ModerationSettings>;

/** The rule engine's view of the settings. */
export function rulesFrom(settings: ModerationSettings): Rules {
  const r = settings.rules;
  const mentionRule = r.mass_mentions ?? r.mention_storm;
  return {
    ...(r.flood && {
      flood: {
        maxMessages: r.flood.max_messages,
        perSeconds: r.flood.per_seconds,
        reportType: r.flood.report_type,
      },
    }),
    ...(r.cross_post && {
      crossPost: {
        minChannels: r.cross_post.min_channels,
        withinSeconds: r.cross_post.within_seconds,
        minLength: r.cross_post.min_length,
        reportType: r.cross_post.report_type,
      },
    }),
    ...(r.repeated_message && {
      repeatedMessage: {
        maxRepeats: r.repeated_message.max_repeats,
        withinSeconds: r.repeated_message.within_seconds,
        minLength: r.repeated_message.min_length,
        reportType: r.repeated_message.report_type,
      },
    }),
    ...(r.link_flood && {
      linkFlood: {
        maxLinks: r.link_flood.max_links,
        ...(r.link_flood.per_sender && {
          perSender: {
            maxLinks: r.link_flood.per_sender.max_links,
            withinSeconds: r.link_flood.per_sender.within_seconds,
          },
        }),
        reportType: r.link_flood.report_type,
      },
    }),
    ...(r.keywords && {
      keywords: {
        words: r.keywords.words.map((word) => ({ word, regex: wordRegex(word) })),
        reportType: r.keywords.report_type,
      },
    }),
    ...(r.new_member_links && {
      newMemberLinks: {
        minAccountAgeDays: r.new_member_links.min_account_age_days,
        reportType: r.new_member_links.report_type,
      },
    }),
    ...(r.blocked_patterns && {
      blockedPatterns: { patterns: r.blocked_patterns.patterns, reportType: r.blocked_patterns.report_type },
    }),
    ...(mentionRule && {
      massMentions: {
        maxUserMentions: mentionRule.max_user_mentions,
        wildcards: mentionRule.wildcards,
        reportType: mentionRule.report_type,
      },
    }),
  };
}

/** A word or phrase as a case-insensitive whole-word match (spaces match any whitespace). */
function wordRegex(word: string): RegExp {
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\s+/g, "\\s+");
  return new RegExp(`(?<![\\p{L}\\p{N}_])${escaped}(?![\\p{L}\\p{N}_])`, "iu");
}

/** Each rule's exemptions and actions, by the engine's rule name. */
export function ruleOptions(settings: ModerationSettings): Partial<Record<RuleName, RuleOptions>> {
  const r = settings.rules;
  const out: Partial<Record<RuleName, RuleOptions>> = {};
  const entries: [RuleName, { exempt?: RuleOptions["exempt"]; actions?: Action[] } | undefined][] = [
    ["flood", r.flood],
    ["cross_post", r.cross_post],
    ["repeated_message", r.repeated_message],
    ["new_member_links", r.new_member_links],
    ["link_flood", r.link_flood],
    ["keywords", r.keywords],
    ["blocked_patterns", r.blocked_patterns],
    ["mass_mentions", r.mass_mentions ?? r.mention_storm],
  ];
  for (const [name, rule] of entries) {
    if (rule)
      out[name] = { ...(rule.exempt ? { exempt: rule.exempt } : {}), actions: rule.actions ?? ["report"] };
  }
  return out;
}

export interface RuleOptions {
  exempt?: z.output<typeof Exempt>;
  actions: Action[];
}
