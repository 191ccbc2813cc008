/**
 * A seeded history for the moderation bot (bots/moderation.ts): accounts, channels and a few
 * hundred messages on a running sandbox, some made to trip each rule and some made to come close
 * without tripping, and the answer key: for each rule, the exact ids that should trip it under
 * {@link HISTORY_SETTINGS}.
 *
 * Needs a sandbox whose organization has an owner and a moderation request channel (the default
 * org has both). Timestamps are spread by the sandbox clock (seconds to minutes apart, a few
 * hours in all); join dates are set through `control.createUser({ date_joined })`.
 *
 * @example Backtest: seed first, then run the bot over the history.
 * ```ts
 * const sandbox = await startSandbox();
 * const history = await seedModerationHistory(sandbox);
 * // run bots/moderation.ts as history.bot.email with history.settings; expect history.expected
 * ```
 * @example Live: start the bot once the accounts exist, and let it keep up with the traffic.
 * ```ts
 * const history = await seedModerationHistory(sandbox, {
 *   beforeTraffic: async ({ bot, settings }) => { running = await runBot(sandbox, { bot: moderation, email: bot.email, settings }); },
 *   pace: () => untilTheBotHasCaughtUp(), // see SeedOptions.pace
 * });
 * ```
 */
import type { Sandbox } from "../../src/sandbox/types.ts";
import {
  type CastMember,
  CHANNELS,
  HISTORY_SETTINGS,
  PEOPLE,
  type Person,
  type SeededRule,
} from "./moderation-history-cast.ts";
import { playScenes } from "./moderation-history-scenes.ts";

export { CHANNELS, HISTORY_SETTINGS, PEOPLE, type SeededRule };

export interface SeedOptions {
  /** The bot's account, created as a generic bot in every seeded channel. Default `moderation-bot@sandbox.example`. */
  botEmail?: string;
  /** Awaited once the accounts and channels exist, before the first message: start a live bot here. */
  beforeTraffic?: (history: Pick<ModerationHistory, "bot" | "settings">) => Promise<void>;
  /**
   * Awaited before each step of the sandbox clock (`seconds` forward, then a message). A live
   * test waits here until the bot has caught up: its event queue is collected when it goes
   * unpolled for 10 minutes of sandbox time, and the rules across conversations need the
   * messages in order.
   */
  pace?: (seconds: number) => Promise<void>;
  /**
   * How many ordinary messages surround the scenes (default 320, for 389 messages in all); fewer
   * gives a shorter history with the same scenes and the same kinds of expectations.
   */
  ordinary?: number;
}

export interface ModerationHistory {
  bot: { email: string; userId: number };
  /** The moderation bot's `settings:` (as in YAML) the expectations assume: {@link HISTORY_SETTINGS}. */
  settings: typeof HISTORY_SETTINGS;
  /** For each rule (by its canonical name), the ids of the messages that trip it, ascending. */
  expected: Record<SeededRule, number[]>;
  /** For each rule, ids made to come close without tripping it (one below a threshold, exempt, …). */
  nearMisses: Record<SeededRule, number[]>;
  /** Every seeded message, oldest first (ids ascending). */
  messageIds: number[];
  /** Accounts by their part in the story, with their ids. */
  users: Record<Person, { email: string; userId: number; fullName: string }>;
}

/**
 * Create the cast (an owner-owned bot, a moderator, old members, a member of a little over three
 * days, a new one, one who joins mid-way), the channels, and the traffic. Deterministic: the same
 * sandbox state gives the same history.
 */
export async function seedModerationHistory(
  sandbox: Sandbox,
  options: SeedOptions = {},
): Promise<ModerationHistory> {
  const control = sandbox.control;
  const start = control.now();
  const owner = control.users().find((u) => u.role === 100 && !u.is_bot);
  if (!owner) throw new Error("seedModerationHistory needs a sandbox whose organization has an owner");
  const users = {} as ModerationHistory["users"];
  for (const [part, p] of Object.entries(PEOPLE) as [Person, CastMember][]) {
    if (p.joinsMidway) continue;
    const created = control.createUser({
      email: p.email,
      full_name: p.fullName,
      role: p.role,
      date_joined: new Date(start - p.joinedAgoMs).toISOString(),
    });
    users[part] = { email: p.email, userId: created.user_id, fullName: p.fullName };
  }
  const botEmail = options.botEmail ?? "moderation-bot@sandbox.example";
  const bot = control.createUser({
    email: botEmail,
    full_name: "Moderation Bot",
    bot: "generic",
    owner: owner.email,
  });
  const members = [owner.user_id, bot.user_id, ...Object.values(users).map((u) => u.userId)];
  for (const name of CHANNELS) await createChannel(sandbox, owner.email, name, members);

  const history: ModerationHistory = {
    bot: { email: botEmail, userId: bot.user_id },
    settings: HISTORY_SETTINGS,
    expected: emptyByRule(),
    nearMisses: emptyByRule(),
    messageIds: [],
    users,
  };
  await options.beforeTraffic?.({ bot: history.bot, settings: history.settings });
  await playScenes(sandbox, history, options.pace ?? (async () => {}), options.ordinary ?? 320);
  for (const ids of [...Object.values(history.expected), ...Object.values(history.nearMisses)])
    ids.sort((a, b) => a - b);
  return history;
}

function emptyByRule(): Record<SeededRule, number[]> {
  return {
    flood: [],
    cross_post: [],
    repeated_message: [],
    new_member_links: [],
    link_flood: [],
    keywords: [],
    blocked_patterns: [],
    mass_mentions: [],
  };
}

/** A public channel with these subscribers, made over the API as the server makes one. */
async function createChannel(sandbox: Sandbox, asEmail: string, name: string, userIds: number[]) {
  const body = new URLSearchParams({
    subscriptions: JSON.stringify([{ name, description: `Seeded channel ${name}.` }]),
    principals: JSON.stringify(userIds),
  });
  const auth = Buffer.from(`${asEmail}:${sandbox.control.apiKeyOf(asEmail)}`).toString("base64");
  const res = await fetch(`${sandbox.url}/api/v1/users/me/subscriptions`, {
    method: "POST",
    headers: { authorization: `Basic ${auth}`, "content-type": "application/x-www-form-urlencoded" },
    body,
  });
  if (!res.ok) throw new Error(`creating channel ${name} failed: ${res.status} ${await res.text()}`);
}

/**
 * The messages reported so far, as the sandbox's Notification Bot posted the reports in the
 * moderation request channel: the message id, the report's description (`reason`), and the rule
 * names the bot's default description gives (`Flagged by the moderation bot (flood, keywords): …`;
 * none for a rule with its own reason template).
 */
export function reportedMessages(sandbox: Sandbox): { id: number; reason: string; rules: string[] }[] {
  return sandbox.control
    .messages()
    .map((m) => String(m.content))
    .filter((c) => /^@_\*\*[^*]+\*\* reported a /.test(c))
    .map((c) => {
      const reason = /^```quote\n\*\*[^*]+\*\*\. (.*)$/m.exec(c.slice(c.indexOf("```quote")))?.[1] ?? "";
      return {
        id: Number(
          /@(\d+)\*\*|\/near\/(\d+)\)/
            .exec(c.slice(c.indexOf("spoiler")))
            ?.slice(1)
            .find(Boolean),
        ),
        reason,
        rules: (/^Flagged by the moderation bot \(([^)]*)\)/.exec(reason)?.[1] ?? "")
          .split(", ")
          .filter(Boolean),
      };
    });
}
