/**
 * The moderation bot's settings (zod), and their translation into the rule engine's {@link Rules}.
 * Regular expressions are compiled here, so a bad one is reported at its config line.
 */
import { z } from "zod";
import type { Rules } from "./rules.ts";

/** Role names as the config spells them → the server's role numbers. */
export const ROLES = { owner: 100, admin: 200, moderator: 300, member: 400, guest: 600 } as const;

/** Placeholders the message to the sender may use. */
export const TEMPLATE_FIELDS = ["name", "rules", "details", "channel", "topic"] as const;

const reportType = (fallback: string) => z.string().trim().min(1).default(fallback);
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
        .regex(/^[imsuv]*$/, { error: "may only use the flags i, m, s, u and v (not g or y)" })
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

const Template = z
  .string()
  .trim()
  .min(1)
  .superRefine((text, ctx) => {
    for (const [, field] of text.matchAll(/\{(\w+)\}/g)) {
      if (!(TEMPLATE_FIELDS as readonly string[]).includes(field!)) {
        ctx.addIssue({
          code: "custom",
          message: `uses {${field}}; the placeholders are ${TEMPLATE_FIELDS.map((f) => `{${f}}`).join(", ")}`,
        });
      }
    }
  });

export const ModerationSettings = z.object({
  /** Log what would be reported (and sent) instead of doing it. */
  dry_run: z.boolean().default(false),
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
      channels: z.array(z.union([z.string().trim().min(1), z.number().int().positive()])).default([]),
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
          report_type: reportType("spam"),
        })
        .optional(),
      cross_post: z
        .object({
          min_channels: whole(2, 3),
          within_seconds: whole(1, 120),
          /** Shorter messages ("thanks!") are never treated as cross-posts. */
          min_length: whole(1, 20),
          report_type: reportType("spam"),
        })
        .optional(),
      new_member_links: z
        .object({ min_account_age_days: z.number().positive().default(3), report_type: reportType("spam") })
        .optional(),
      blocked_patterns: z
        .object({ patterns: z.array(Pattern).min(1), report_type: reportType("norms") })
        .optional(),
      mass_mentions: z
        .object({
          max_user_mentions: whole(1, 10),
          wildcards: z.boolean().default(true),
          report_type: reportType("norms"),
        })
        .optional(),
    })
    .refine((r) => Object.values(r).some((v) => v !== undefined), {
      error:
        "turns no rule on: add at least one of flood, cross_post, new_member_links, blocked_patterns, mass_mentions",
    }),
});

export type ModerationSettings = z.output<typeof ModerationSettings>;

/** The rule engine's view of the settings. */
export function rulesFrom(settings: ModerationSettings): Rules {
  const r = settings.rules;
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
    ...(r.new_member_links && {
      newMemberLinks: {
        minAccountAgeDays: r.new_member_links.min_account_age_days,
        reportType: r.new_member_links.report_type,
      },
    }),
    ...(r.blocked_patterns && {
      blockedPatterns: { patterns: r.blocked_patterns.patterns, reportType: r.blocked_patterns.report_type },
    }),
    ...(r.mass_mentions && {
      massMentions: {
        maxUserMentions: r.mass_mentions.max_user_mentions,
        wildcards: r.mass_mentions.wildcards,
        reportType: r.mass_mentions.report_type,
      },
    }),
  };
}
