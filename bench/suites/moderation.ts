/**
 * Moderation: messages per second the shipped moderation rules (bots/moderation/rules.ts, with
 * settings parsed by bots/moderation/settings.ts) scan on one core, every rule on. Loaded by
 * path at run time: the rules belong to another engineer and may not be in every checkout.
 */
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { messageEvent, seeded } from "../servers/event-data.ts";

export interface ModerationResult {
  available: boolean;
  note: string;
  messagesPerSecond?: number;
  matchesPerThousand?: number;
}

type Scan = (message: Record<string, unknown>, rules: unknown, state: unknown) => unknown[];

const settings = {
  rules: {
    flood: { max_messages: 5, per_seconds: 10 },
    cross_post: { min_channels: 3, within_seconds: 120, min_length: 20 },
    new_member_links: { min_account_age_days: 3 },
    blocked_patterns: {
      patterns: [
        "free money",
        "crypto ?giveaway",
        "\\bviagra\\b",
        { pattern: "bit\\.ly/\\w+", name: "shortener" },
        "(?:buy|cheap) followers",
      ],
    },
    mass_mentions: { max_user_mentions: 10, wildcards: true },
  },
};

export async function runModeration(
  options: { seconds: number },
  say: (line: string) => void,
): Promise<ModerationResult> {
  const path = (name: string) => fileURLToPath(new URL(`../../bots/moderation/${name}`, import.meta.url));
  if (!existsSync(path("rules.ts")) || !existsSync(path("settings.ts"))) {
    const note = "bots/moderation/rules.ts is not in this checkout; not measured";
    say(`  moderation: ${note}`);
    return { available: false, note };
  }
  const rulesModule = (await import(pathToFileURL(path("rules.ts")).href)) as {
    scanMessage: Scan;
    createRuleState(): unknown;
  };
  const settingsModule = (await import(pathToFileURL(path("settings.ts")).href)) as {
    ModerationSettings: { parse(v: unknown): unknown };
    rulesFrom(s: unknown): unknown;
  };
  const rules = settingsModule.rulesFrom(settingsModule.ModerationSettings.parse(settings));
  // The dispatch benchmark's messages, with a link or a blocked phrase now and then.
  const random = seeded(7);
  const messages = Array.from({ length: 10_000 }, (_, i) => {
    const m = (messageEvent(i, random) as { message: Record<string, unknown> }).message;
    const extra = i % 50 === 0 ? " see https://bit.ly/abc" : i % 97 === 0 ? " free money inside" : "";
    return {
      id: m.id,
      senderId: m.sender_id,
      ...(m.stream_id === undefined ? {} : { channelId: m.stream_id }),
      content: `${String(m.content)}${extra}`,
      senderJoinedAtMs: Date.UTC(2025, 0, 1) + (i % 400) * 86_400_000,
    };
  });
  const state = rulesModule.createRuleState();
  let scanned = 0;
  let matched = 0;
  const started = performance.now();
  const until = started + options.seconds * 1000;
  while (performance.now() < until) {
    for (const m of messages) {
      // About 1,000 messages a second of simulated server time.
      const timestamp = 1_767_225_600 + Math.floor(scanned / 1000);
      matched += rulesModule.scanMessage({ ...m, timestamp }, rules, state).length;
      scanned++;
    }
  }
  const perSecond = Math.round(scanned / ((performance.now() - started) / 1000));
  const note = "every rule on: flood, cross_post, new_member_links, 5 blocked patterns, mass_mentions";
  say(`  moderation: ${perSecond} messages/s on one core (${note})`);
  return {
    available: true,
    note,
    messagesPerSecond: perSecond,
    matchesPerThousand: Math.round((1000 * matched) / scanned),
  };
}
