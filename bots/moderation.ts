/**
 * moderation: reports rule-breaking channel messages to the organization's moderators
 * (ctx.report: each message at most once, ever), and optionally tells the sender.
 *
 * Rules (each off unless configured): message floods per sender, links from new members,
 * blocked patterns, the same message cross-posted to several channels, and mass mentions.
 * Edited messages are checked again with the content rules, and their report quotes the edit
 * history. The bot sees the channels it is subscribed to (or all public ones with
 * `all_public_streams: true`); reporting needs a moderation request channel in the organization
 * (otherwise one warning is logged and nothing is reported).
 *
 * Config:
 * ```yaml
 * bots:
 *   moderation:
 *     module: ./bots/moderation.ts
 *     email: moderation-bot@chat.example.org
 *     api_key: ${MODERATION_BOT_API_KEY}
 *     all_public_streams: true
 *     settings:
 *       dry_run: false            # true: only log what would be reported
 *       check_edits: true         # re-check edited messages (content rules)
 *       notify_sender: "Hi {name}, your message in #{channel} > {topic} was sent to the moderators: {details}."
 *       exempt:
 *         roles: [owner, admin, moderator]   # default
 *         channels: [moderation, bot-testing]
 *         bots: true                          # default
 *       rules:
 *         flood: { max_messages: 5, per_seconds: 10 }                    # report_type: spam
 *         cross_post: { min_channels: 3, within_seconds: 120, min_length: 20 }
 *         new_member_links: { min_account_age_days: 3 }
 *         blocked_patterns:
 *           report_type: norms                                           # default
 *           patterns:
 *             - "free\\s+crypto"                                         # case-insensitive
 *             - { pattern: "SELL NOW", flags: "", name: "shouting sales" }
 *         mass_mentions: { max_user_mentions: 10, wildcards: true }      # report_type: norms
 * ```
 * Every rule takes `report_type`, a key of the server's report types (spam, harassment,
 * inappropriate, norms, other). Template placeholders: {name}, {rules}, {details}, {channel}, {topic}.
 */
import { type BaseContext, defineBot, type User } from "bothost";
import { describeHistory } from "./moderation/edit-history.ts";
import { createRuleState, type RuleMatch, scanMessage } from "./moderation/rules.ts";
import { ModerationSettings, ROLES, rulesFrom } from "./moderation/settings.ts";

const LABELS: Record<RuleMatch["rule"], string> = {
  flood: "message flood",
  cross_post: "cross-posting",
  new_member_links: "link from a new member",
  blocked_patterns: "blocked pattern",
  mass_mentions: "mass mentions",
};

interface Flagged {
  messageId: number;
  sender: User | undefined;
  channel: string;
  topic: string;
  matches: RuleMatch[];
  /** The quoted edit history, for edits. */
  history?: string;
}

export default defineBot({
  settings: ModerationSettings,
  setup(bot, settings) {
    const rules = rulesFrom(settings);
    const state = createRuleState();
    const exemptRoles = new Set<number>(settings.exempt.roles.map((r) => ROLES[r]));
    const exemptChannels = new Set(settings.exempt.channels.map((c) => String(c).toLowerCase()));
    const channelExempt = (id: number, name: string | undefined) =>
      exemptChannels.has(String(id)) || (name !== undefined && exemptChannels.has(name.toLowerCase()));
    const userExempt = (u: User | undefined) =>
      u !== undefined && (exemptRoles.has(u.role) || (settings.exempt.bots && u.is_bot));
    const joinedAt = (u: User | undefined) => (u ? Date.parse(u.date_joined) : undefined);

    // Roles and join dates come from ctx.users; realm_user events keep them current.
    bot.track("users");

    bot.on("message", async (ctx) => {
      const m = ctx.event.message;
      if (m.type !== "stream" || m.stream_id === undefined) return;
      const channel = typeof m.display_recipient === "string" ? m.display_recipient : String(m.stream_id);
      if (channelExempt(m.stream_id, channel)) return;
      const sender = await ctx.users.get(m.sender_id);
      if (userExempt(sender)) return;
      const joined = joinedAt(sender);
      const matches = scanMessage(
        {
          id: m.id,
          senderId: m.sender_id,
          streamId: m.stream_id,
          content: m.content,
          timestamp: m.timestamp,
          ...(joined !== undefined ? { senderJoinedAtMs: joined } : {}),
        },
        rules,
        state,
      );
      if (matches.length > 0) await act(ctx, { messageId: m.id, sender, channel, topic: m.subject, matches });
    });

    if (settings.check_edits) {
      bot.on("update_message", async (ctx) => {
        const e = ctx.event;
        if (e.rendering_only || e.content === undefined || e.content === e.orig_content) return;
        if (e.stream_id === undefined || e.user_id === null) return; // direct messages are not moderated
        const channel = e.stream_name ?? ctx.channelName?.(e.stream_id) ?? String(e.stream_id);
        if (channelExempt(e.stream_id, channel)) return;
        const sender = await ctx.users.get(e.user_id); // only the sender may edit content
        if (userExempt(sender)) return;
        const joined = joinedAt(sender);
        const matches = scanMessage(
          {
            id: e.message_id,
            senderId: e.user_id,
            streamId: e.stream_id,
            content: e.content,
            timestamp: e.edit_timestamp,
            ...(joined !== undefined ? { senderJoinedAtMs: joined } : {}),
          },
          rules,
          state,
          { edit: true },
        );
        if (matches.length === 0) return;
        const { message_history } = await ctx.api.messages.history(e.message_id, {}, { signal: ctx.signal });
        const topic = e.subject ?? message_history.at(-1)?.topic ?? "";
        const history = describeHistory(message_history);
        await act(ctx, { messageId: e.message_id, sender, channel, topic, matches, history });
      });
    }

    async function act(ctx: BaseContext<ModerationSettings>, f: Flagged): Promise<void> {
      const reportType = f.matches[0]!.reportType;
      const details = f.matches.map((m) => `${LABELS[m.rule]}: ${m.details}`).join("; ");
      // The rule comes first: the server keeps 1000 characters, and a long history is cut, not the reason.
      const description = `Flagged by the moderation bot (${f.matches.map((m) => m.rule).join(", ")}): ${details}.${
        f.history ? ` ${f.history}` : ""
      }`;
      const where = { messageId: f.messageId, rules: f.matches.map((m) => m.rule), reportType };
      if (settings.dry_run) {
        ctx.log.info(
          { ...where, description },
          `dry run: would report message ${f.messageId} as ${reportType}: ${details}`,
        );
        if (settings.notify_sender && f.sender) {
          ctx.log.info(
            { ...where, userId: f.sender.user_id },
            "dry run: would tell the sender by direct message",
          );
        }
        return;
      }
      const result = await ctx.report(f.messageId, reportType, description);
      if (!result.reported) {
        ctx.log.info(
          { ...where, reason: result.reason },
          `message ${f.messageId} not reported (${result.reason})`,
        );
        return;
      }
      ctx.log.info(where, `reported message ${f.messageId} as ${reportType}: ${details}`);
      if (settings.notify_sender && f.sender) {
        const fields: Record<string, string> = {
          name: f.sender.full_name,
          rules: f.matches.map((m) => LABELS[m.rule]).join(", "),
          details,
          channel: f.channel,
          topic: f.topic,
        };
        const content = settings.notify_sender.replace(
          /\{(\w+)\}/g,
          (all, key: string) => fields[key] ?? all,
        );
        await ctx.send({ type: "direct", to: [f.sender.user_id], content });
      }
    }
  },
});
