/**
 * The channels the settings name: `exempt.channels` (globally and per rule) and each
 * `notify_channel`'s channel. They are looked up once at start among the channels the bot can see
 * (GET /streams: the public ones and those it is subscribed to), and one warning names each entry
 * that matches none. A misspelt name would otherwise exempt nothing (messages there are checked)
 * or fail each notification, unnoticed until a message trips the rule.
 */
import type { BaseContext } from "bothost";
import type { ModerationSettings, RuleOptions } from "./settings.ts";

/** A configured channel and where it is in the settings, e.g. `exempt.channels[1]`. */
interface Entry {
  value: string | number;
  path: string;
  /** What a wrong entry does. */
  effect: "exempts nothing" | "notifications fail";
}

export function channelNames(
  settings: ModerationSettings,
  rules: Partial<Record<string, RuleOptions>>,
): (ctx: BaseContext<ModerationSettings>) => Promise<void> {
  const entries: Entry[] = [];
  const exempt = (list: readonly (string | number)[], path: string) => {
    for (const [i, value] of list.entries())
      entries.push({ value, path: `${path}[${i}]`, effect: "exempts nothing" });
  };
  exempt(settings.exempt.channels, "exempt.channels");
  for (const [name, o] of Object.entries(rules)) {
    if (o?.exempt) exempt(o.exempt.channels, `rules.${name}.exempt.channels`);
    for (const [i, a] of (o?.actions ?? []).entries()) {
      if (typeof a === "object" && "notify_channel" in a)
        entries.push({
          value: a.notify_channel.channel,
          path: `rules.${name}.actions[${i}].notify_channel.channel`,
          effect: "notifications fail",
        });
    }
  }
  return async (ctx) => {
    if (entries.length === 0) return;
    // A check only: a server that fails the read now is told in one line, and the bot goes on.
    const listed = await ctx.api.channels.list({}, { signal: ctx.signal }).catch((err: unknown) => {
      const reason = err instanceof Error ? err.message : String(err);
      ctx.log.warn({ reason }, "could not read the channels to check the ones the settings name");
      return undefined;
    });
    if (listed === undefined) return;
    const { streams } = listed;
    const known = (v: string | number) =>
      streams.some(
        (s) => String(s.stream_id) === String(v) || s.name.toLowerCase() === String(v).toLowerCase(),
      );
    const missing = entries.filter((e) => !known(e.value));
    if (missing.length === 0) return;
    ctx.log.warn(
      { entries: missing.map((e) => `${e.path}: ${e.value}`) },
      `${missing.map((e) => `${e.path}: ${e.value} (${e.effect})`).join(", ")} ` +
        `${missing.length === 1 ? "names no channel" : "name no channels"} the bot can see. ` +
        "Check the spelling (or give the channel's id), and subscribe the bot to a private channel.",
    );
  };
}
