/**
 * The moderation bot's commands, answered in a direct message or when it is mentioned: `rules`
 * (the rules that are on, with their limits) and `stats` (moderators and above: messages flagged
 * per rule in the last 24 hours, from what the bot recorded). `help` is generated. A one-word
 * message that is no command gets the closest command names; longer ones are not answered.
 */
import type { BotApi, KV } from "bothost";
import { LABELS } from "./actions.ts";
import type { RuleMatch, RuleName } from "./rule-types.ts";
import type { ModerationSettings } from "./settings.ts";

const DAY_MS = 86_400_000;
const FLAGS_KEY = "stats/flagged";

type Flagged = Partial<Record<RuleName, number[]>>;

/** Note that a message broke `matches` (each rule once) at `now` (the daemon's clock), keeping a day of history. */
export async function recordFlags(state: KV, matches: readonly RuleMatch[], now: number): Promise<void> {
  await state.update<Flagged>(FLAGS_KEY, (current = {}) => {
    const next: Flagged = {};
    for (const [rule, times] of Object.entries(current) as [RuleName, number[]][]) {
      const recent = times.filter((t) => t > now - DAY_MS);
      if (recent.length > 0) next[rule] = recent;
    }
    for (const rule of new Set(matches.map((m) => m.rule))) next[rule] = [...(next[rule] ?? []), now];
    return next;
  });
}

export function moderationCommands(bot: BotApi<ModerationSettings>, settings: ModerationSettings): void {
  bot.command("rules", { description: "the rules that are on, with their limits" }, (ctx) =>
    ctx.reply(describeRules(settings)),
  );
  bot.command(
    "stats",
    { description: "messages flagged per rule in the last 24 hours", allow: "moderator" },
    async (ctx) => {
      const flagged = (await ctx.state.get<Flagged>(FLAGS_KEY)) ?? {};
      const since = ctx.now() - DAY_MS;
      const lines = (Object.entries(flagged) as [RuleName, number[]][])
        .map(([rule, times]) => [rule, times.filter((t) => t > since).length] as const)
        .filter(([, n]) => n > 0)
        .map(([rule, n]) => `* ${LABELS[rule]} (\`${rule}\`): ${n}`);
      await ctx.reply(
        lines.length === 0
          ? "No message broke a rule in the last 24 hours."
          : ["Messages flagged in the last 24 hours:", ...lines].join("\n"),
      );
    },
  );
  // People also write to the moderation bot to report things, and spammers write to it: only a
  // one-word message that names no command ("stast") is answered as a mistyped command.
  bot.on("message", { addressed: true, when: (ctx) => /\s/.test(ctx.text) }, () => {});
}

/** Each configured rule with its limits, e.g. "message flood (`flood`): max messages 5, per seconds 10". */
function describeRules(settings: ModerationSettings): string {
  const rules = Object.entries(settings.rules).filter(([, options]) => options !== undefined);
  if (rules.length === 0) return "No rule is on.";
  const lines = rules.map(([name, options]) => {
    const label = LABELS[(name === "mention_storm" ? "mass_mentions" : name) as RuleName] ?? name;
    const limits = Object.entries(options as Record<string, unknown>)
      .filter(([key]) => !["exempt", "actions"].includes(key))
      .map(([key, value]) => `${key.replaceAll("_", " ")} ${show(value)}`);
    return `* ${label} (\`${name}\`): ${limits.join(", ")}`;
  });
  return ["Rules that are on:", ...lines].join("\n");
}

function show(value: unknown): string {
  if (Array.isArray(value))
    return value
      .map((v) =>
        typeof v === "object" && v !== null
          ? ((v as { name?: string; pattern?: string }).name ?? (v as { pattern?: string }).pattern)
          : String(v),
      )
      .join(", ");
  if (typeof value === "object" && value !== null)
    return `(${Object.entries(value)
      .map(([k, v]) => `${k.replaceAll("_", " ")} ${show(v)}`)
      .join(", ")})`;
  return String(value);
}
