/**
 * What the moderation bot does about a flagged message: each broken rule's actions. Reports are
 * made once per message (one report naming every rule that reports); replies, direct messages to
 * the sender and channel notifications are made per rule. Messages are filled in with
 * `renderTemplate`. Every log line names its rules (`rules`), which is what `bothost backtest`
 * reads. A dry run is the bot-level `dry_run: true`, which captures these writes.
 */
import { type BaseContext, renderTemplate, type User } from "bothost";
import type { RuleMatch, RuleName } from "./rule-types.ts";
import type { Action, ModerationSettings, RuleOptions } from "./settings.ts";

export const LABELS: Record<RuleName, string> = {
  flood: "message flood",
  cross_post: "cross-posting",
  repeated_message: "repeated message",
  new_member_links: "link from a new member",
  link_flood: "too many links",
  keywords: "blocked word",
  blocked_patterns: "blocked pattern",
  mass_mentions: "mass mentions",
};

export interface Flagged {
  messageId: number;
  sender: User | undefined;
  senderId: number;
  /** The channel's name; undefined for a direct message. */
  channel: string | undefined;
  topic: string;
  matches: RuleMatch[];
  /** The quoted edit history, for edits. */
  history?: string;
}

const isReport = (a: Action): boolean => a === "report" || (typeof a === "object" && "report" in a);

export async function act(
  ctx: BaseContext<ModerationSettings>,
  settings: ModerationSettings,
  options: Partial<Record<RuleName, RuleOptions>>,
  f: Flagged,
): Promise<void> {
  const actionsOf = (m: RuleMatch) => options[m.rule]?.actions ?? ["report"];
  const fields = (matches: RuleMatch[]): Record<string, string> => ({
    name: f.sender?.full_name ?? "there",
    rules: matches.map((m) => LABELS[m.rule]).join(", "),
    details: matches.map((m) => `${LABELS[m.rule]}: ${m.details}`).join("; "),
    channel: f.channel ?? "a direct message",
    topic: f.topic,
    // Where the message was, read the same for a channel message and a direct message to the bot.
    where: f.channel === undefined ? "a direct message" : `#${f.channel} > ${f.topic}`,
    // A full address, as the server writes its own message links: a bare `#narrow/…` is no link.
    link: `${ctx.server.realmUrl ? `${ctx.server.realmUrl.replace(/\/+$/, "")}/` : ""}#narrow/id/${f.messageId}`,
  });
  const reporting = f.matches.filter((m) => actionsOf(m).some(isReport));
  if (reporting.length > 0) await report(ctx, settings, f, reporting, fields(reporting), actionsOf);
  for (const m of f.matches) {
    for (const action of actionsOf(m)) {
      if (isReport(action)) continue;
      await perform(ctx, f, m, action as Exclude<Action, "report" | { report: unknown }>, fields([m]));
    }
  }
}

async function report(
  ctx: BaseContext<ModerationSettings>,
  settings: ModerationSettings,
  f: Flagged,
  matches: RuleMatch[],
  values: Record<string, string>,
  actionsOf: (m: RuleMatch) => Action[],
): Promise<void> {
  const reportType = matches[0]!.reportType;
  const reason = matches
    .flatMap(actionsOf)
    .find((a): a is { report: { reason: string } } => typeof a === "object" && "report" in a)?.report.reason;
  // The rule comes first: the server keeps 1000 characters, and a long history is cut, not the reason.
  const description = reason
    ? renderTemplate(reason, values)
    : `Flagged by the moderation bot (${matches.map((m) => m.rule).join(", ")}): ${values.details}.${
        f.history ? ` ${f.history}` : ""
      }`;
  const where = { ...messageOf(ctx, f), rules: matches.map((m) => m.rule), reportType };
  // A run again of this message's event (a retry, the catch-up after a kill -9) gets its first
  // run's `reported: true` back, so the sender is told once; another event (an edit) gets `duplicate`.
  const result = await ctx.report(f.messageId, reportType, description);
  if (!result.reported) {
    ctx.log.info(
      { ...where, reason: result.reason },
      `message ${f.messageId} not reported (${result.reason})`,
    );
    return;
  }
  // A dry run's report is captured, not made (the runtime logs the capture too).
  const did = ctx.bot.dryRun ? "would report" : "reported";
  if (result.unconfirmed)
    ctx.log.warn(
      where,
      `message ${f.messageId}'s report was sent by an earlier run of its handler, which got no answer ` +
        "(cut short by a kill, a stop or a timeout, or its answer lost): it counts as made and is " +
        "not sent again; see in the moderation request channel whether it arrived",
    );
  else if (result.earlier)
    ctx.log.info(where, `message ${f.messageId} was reported by an earlier run of its handler: not again`);
  else ctx.log.info(where, `${did} message ${f.messageId} as ${reportType}: ${values.details}`);
  if (settings.notify_sender) {
    await ctx.send({
      type: "direct",
      to: [f.senderId],
      content: renderTemplate(settings.notify_sender, values),
    });
  }
}

async function perform(
  ctx: BaseContext<ModerationSettings>,
  f: Flagged,
  m: RuleMatch,
  action: Exclude<Action, "report" | { report: unknown }>,
  values: Record<string, string>,
): Promise<void> {
  const where = { ...messageOf(ctx, f), rules: [m.rule], action: Object.keys(action)[0] ?? "act" };
  const params =
    "reply" in action
      ? f.channel === undefined
        ? { type: "direct" as const, to: [f.senderId], content: renderTemplate(action.reply, values) }
        : {
            type: "channel" as const,
            to: f.channel,
            topic: f.topic,
            content: renderTemplate(action.reply, values),
          }
      : "dm_sender" in action
        ? { type: "direct" as const, to: [f.senderId], content: renderTemplate(action.dm_sender, values) }
        : {
            type: "channel" as const,
            to: action.notify_channel.channel,
            topic: action.notify_channel.topic,
            content: renderTemplate(action.notify_channel.content, values),
          };
  await ctx.send(params);
  ctx.log.info(where, `${where.action.replace("_", " ")} for message ${f.messageId} (${LABELS[m.rule]})`);
}

/** The flagged message's id for a log line, unless `ctx.log` names it already (an edit's does not). */
function messageOf(ctx: BaseContext<ModerationSettings>, f: Flagged): { messageId?: number } {
  return ctx.log.bindings().messageId === f.messageId ? {} : { messageId: f.messageId };
}
