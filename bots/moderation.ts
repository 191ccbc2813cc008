/**
 * moderation: checks channel messages and the direct messages sent to it against configurable
 * rules, and does what each broken rule says: report to the organization's moderators
 * (ctx.report: each message at most once, ever), reply, tell the sender, notify a channel.
 *
 * Rules (each off unless configured): message floods per sender, cross-posts to several
 * channels, the same message repeated, links from new members, too many links, blocked words,
 * blocked patterns, and mass mentions (mention storms). Edited messages are checked again with
 * the content rules, and their report quotes the edit history. Each rule takes its thresholds,
 * `report_type`, `exempt` (roles, channels, users) and `actions` (default: report). The bot sees
 * the channels it is subscribed to (and the messages, not the edits, of all public ones with
 * `all_public_streams: true`; those are not caught up after a restart);
 * reporting needs a moderation request channel in the organization (otherwise one warning is
 * logged and nothing is reported).
 *
 * Config:
 * ```yaml
 * bots:
 *   moderation:
 *     module: ./bots/moderation.ts
 *     email: moderation-bot@chat.example.org
 *     api_key: ${MODERATION_BOT_API_KEY}
 *     all_public_streams: true
 *     dry_run: false              # true: capture every report and message instead of making it
 *     settings:
 *       check_edits: true         # re-check edited messages (content rules)
 *       notify_sender: "Hi {{name}}, your message in {{where}} was sent to the moderators: {{details}}."
 *       exempt:
 *         roles: [owner, admin, moderator]   # default
 *         channels: [moderation, bot-testing]
 *         users: [ci-bot@chat.example.org]
 *         bots: true                          # default
 *       rules:
 *         flood: { max_messages: 5, per_seconds: 10 }                    # report_type: spam
 *         cross_post: { min_channels: 3, within_seconds: 120, min_length: 20 }
 *         repeated_message: { max_repeats: 3, within_seconds: 600, min_length: 10 }
 *         new_member_links: { min_account_age_days: 3 }
 *         link_flood:
 *           max_links: 5                                                 # in one message
 *           per_sender: { max_links: 10, within_seconds: 300 }           # across messages (optional)
 *           exempt: { channels: [links] }
 *           actions: [{ reply: "Please keep it to a few links, {{name}}." }]
 *         keywords: { words: [scam, "wire transfer"] }                   # report_type: norms
 *         blocked_patterns:
 *           report_type: norms                                           # default
 *           patterns:
 *             - "free\\s+crypto"                                         # case-insensitive
 *             - { pattern: "SELL NOW", flags: "", name: "shouting sales" }
 *           actions:
 *             - report
 *             - { notify_channel: { channel: moderators, topic: patterns, content: "{{details}}: {{link}}" } }
 *         mass_mentions: { max_user_mentions: 10, wildcards: true }      # or mention_storm
 * ```
 * Every rule takes `report_type`, a key of the server's report types (spam, harassment,
 * inappropriate, norms, other), `exempt` (roles, channels by name or id, users by id or email:
 * see ./moderation/exempt-users.ts, an email the organization hides from the bot matches nobody
 * and a warning at start says so; added to the global ones; a message exempt from a rule does not
 * count toward its limits) and
 * `actions`: `report`, `{ report: { reason } }`, `{ reply }`, `{ dm_sender }`,
 * `{ notify_channel: { channel, topic, content } }` (default: `[report]`). Template placeholders:
 * {{name}}, {{rules}}, {{details}}, {{channel}}, {{topic}}, {{where}}, {{link}} (the old single-brace `{name}`
 * is refused with the new spelling named).
 */
import { type BotContext, defineBot, type User } from "bothost";
import { act } from "./moderation/actions.ts";
import { moderationCommands, recordFlags } from "./moderation/commands.ts";
import { describeHistory } from "./moderation/edit-history.ts";
import { exemptUsers } from "./moderation/exempt-users.ts";
import type { RuleMatch, RuleName, ScannedMessage } from "./moderation/rule-types.ts";
import { countsPosts, createRuleState, scanMessage } from "./moderation/rules.ts";
import {
  ModerationSettings,
  ROLES,
  type RuleOptions,
  ruleOptions,
  rulesFrom,
} from "./moderation/settings.ts";

type Exempt = NonNullable<RuleOptions["exempt"]>;

export default defineBot({
  settings: ModerationSettings,
  setup(bot, settings) {
    const rules = rulesFrom(settings);
    const options = ruleOptions(settings);
    const state = createRuleState();
    // Emails in exempt.users are looked up at start (one warning names those that match nobody);
    // the channels the settings name are checked by bothost (channelSetting).
    const users = exemptUsers(settings, options);
    bot.onStart((ctx) => users.resolve(ctx));
    const inList = (list: readonly (string | number)[], ...values: (string | number | undefined)[]) =>
      values.some(
        (v) => v !== undefined && list.some((x) => String(x).toLowerCase() === String(v).toLowerCase()),
      );
    const exempt = (
      e: Exempt,
      roles: readonly number[],
      u: User | undefined,
      senderId: number,
      place: Place,
    ) =>
      (u !== undefined && roles.includes(u.role)) ||
      users.names(e.users, senderId, u) ||
      (place.channelId !== undefined && inList(e.channels, place.channelId, place.channel));
    const globalRoles = settings.exempt.roles.map((r) => ROLES[r]);
    const everywhere = (u: User | undefined, senderId: number, place: Place) =>
      (u !== undefined && settings.exempt.bots && u.is_bot) ||
      exempt(settings.exempt, globalRoles, u, senderId, place);
    /** The rules whose own exemptions cover this sender or place: they do not see the message. */
    const exemptFrom = (u: User | undefined, senderId: number, place: Place): Set<RuleName> =>
      new Set(
        (Object.entries(options) as [RuleName, RuleOptions][])
          .filter(
            ([, o]) =>
              o.exempt &&
              exempt(
                o.exempt,
                (o.exempt.roles ?? []).map((r) => ROLES[r]),
                u,
                senderId,
                place,
              ),
          )
          .map(([name]) => name),
      );

    // Roles and join dates come from ctx.users; realm_user events keep them current.
    bot.track("users");

    bot.on("message", async (ctx, next) => {
      // The commands below answer first; a message that ran one is not checked (asking the bot
      // for its rules a few times is no flood), every other message is.
      await next();
      if (ctx.command !== undefined) return;
      const m = ctx.event.message;
      const place = placeOf(m.stream_id, m.display_recipient);
      if (place === undefined) return;
      const sender = await ctx.users.get(m.sender_id);
      await users.resolve(ctx); // done at start; here too when a message comes first (or in a backtest)
      if (everywhere(sender, m.sender_id, place)) return;
      const scanned = toScanned(m.id, m.sender_id, place.channelId, m.content, m.timestamp, sender);
      const found = scanMessage(scanned, rules, state, { skip: exemptFrom(sender, m.sender_id, place) });
      const matches = countsPosts(rules) ? await keptMatches(ctx, m.id, found) : found;
      if (matches.length === 0) return;
      await act(ctx, settings, options, {
        messageId: m.id,
        sender,
        senderId: m.sender_id,
        channel: place.channel,
        topic: m.subject,
        matches,
      });
      await recordFlags(ctx.state, matches, ctx.now());
    });

    moderationCommands(bot, settings);

    if (settings.check_edits) {
      bot.on("update_message", async (ctx) => {
        const e = ctx.event;
        if (e.rendering_only || e.content === undefined || e.content === e.orig_content) return;
        if (e.user_id === null) return;
        const name =
          e.stream_id === undefined ? undefined : (e.stream_name ?? ctx.channelName?.(e.stream_id));
        const place: Place =
          e.stream_id === undefined ? {} : { channelId: e.stream_id, channel: name ?? String(e.stream_id) };
        const sender = await ctx.users.get(e.user_id); // only the sender may edit content
        await users.resolve(ctx);
        if (everywhere(sender, e.user_id, place)) return;
        const scanned = toScanned(
          e.message_id,
          e.user_id,
          place.channelId,
          e.content,
          e.edit_timestamp,
          sender,
        );
        const skip = exemptFrom(sender, e.user_id, place);
        const matches = scanMessage(scanned, rules, state, { edit: true, skip });
        if (matches.length === 0) return;
        const { message_history } = await ctx.api.messages.history(e.message_id, {}, { signal: ctx.signal });
        await act(ctx, settings, options, {
          messageId: e.message_id,
          sender,
          senderId: e.user_id,
          channel: place.channel,
          topic: e.subject ?? message_history.at(-1)?.topic ?? "",
          matches,
          history: describeHistory(message_history),
        });
        await recordFlags(ctx.state, matches, ctx.now());
      });
    }
  },
});

/** How long the rules a message broke are kept for a run again of its handler after a restart. */
const KEPT_MS = 30 * 86_400_000;

/**
 * The rules message `id` broke. The posting rules count in memory: after a restart (the catch-up
 * after a kill -9, a dead letter's replay) the message's run again counts it alone, and would find
 * nothing. So what a run found is kept (at once, before any action) and a run again (each has
 * `ctx.replayed`, a retry too) takes it: the actions its first run did not finish are done.
 */
async function keptMatches(ctx: BotContext<unknown>, id: number, found: RuleMatch[]): Promise<RuleMatch[]> {
  const key = `flagged/${id}`;
  if (ctx.replayed) {
    const kept = await ctx.state.get<RuleMatch[]>(key);
    if (kept !== undefined) return kept;
  }
  if (found.length > 0) await ctx.state.immediate.set(key, found, { ttlMs: KEPT_MS });
  return found;
}

/** Where a message was posted: a channel, or (both undefined) a direct message. */
interface Place {
  channelId?: number;
  channel?: string;
}

function placeOf(channelId: number | undefined, recipient: unknown): Place | undefined {
  if (channelId === undefined) return Array.isArray(recipient) ? {} : undefined;
  return { channelId, channel: typeof recipient === "string" ? recipient : String(channelId) };
}

function toScanned(
  id: number,
  senderId: number,
  channelId: number | undefined,
  content: string,
  timestamp: number,
  sender: User | undefined,
): ScannedMessage {
  const joined = sender ? Date.parse(sender.date_joined) : undefined;
  return {
    id,
    senderId,
    ...(channelId !== undefined ? { channelId } : {}),
    content,
    timestamp,
    ...(joined !== undefined && !Number.isNaN(joined) ? { senderJoinedAtMs: joined } : {}),
  };
}
