/**
 * What a reload changes: the bots to start, stop and restart, and the settings that only a
 * restart of the daemon applies. A bot restarts when its config entry (credentials included),
 * its settings or its module's fingerprint changed; every other bot keeps running untouched.
 */
import { createHash } from "node:crypto";
import type { BotConfig, Config } from "../config/schema.ts";

export interface ReloadPlan {
  add: string[];
  remove: string[];
  restart: string[];
  keep: string[];
  /** Changed settings a reload cannot apply (the daemon keeps the old ones until it restarts). */
  needRestart: string[];
}

/** What a reload did: the plan, and the bots that failed to start again (with the reason). */
export interface ReloadReport extends ReloadPlan {
  failed: { name: string; error: string }[];
  /**
   * Bots of `add` and `restart` this instance does not run (instances sharing bots through Redis):
   * their new version is loaded here and starts only when this instance wins their lease, while
   * the instance holding it keeps running the version it has.
   */
  notHere?: string[];
  /**
   * Those of `notHere` no instance is known to run (their lease free, or its holder not read
   * within a ttl): an instance takes each once a round finds its lease free, this one included.
   */
  runsNowhere?: string[];
  /** The instance known to run each of `notHere` but `runsNowhere`: the one to reload too. */
  runsOn?: Record<string, string>;
  /**
   * The settings of the bots started here that name a channel or user group the bot cannot see,
   * located as `bothost check` prints them: the reload is applied all the same.
   */
  warnings?: string[];
}

/** What is compared per bot: a hash of its config entry, and its module's fingerprint. */
export interface BotIdentity {
  entry: string;
  module: string;
}

/** The identity of a bot entry: a hash, so no secret is kept or logged in the clear. */
export function entryHash(bot: BotConfig): string {
  return createHash("sha256").update(stableJson(bot)).digest("hex");
}

/** Top-level settings a running daemon cannot change (it binds or opens them at start). */
const FIXED = ["state", "leases", "http", "server.sandbox"] as const;

export function planReload(
  before: { config: Config; bots: ReadonlyMap<string, BotIdentity> },
  after: { config: Config; bots: ReadonlyMap<string, BotIdentity> },
): ReloadPlan {
  const plan: ReloadPlan = { add: [], remove: [], restart: [], keep: [], needRestart: [] };
  for (const [name, next] of after.bots) {
    const now = before.bots.get(name);
    if (!now) plan.add.push(name);
    else if (now.entry !== next.entry || now.module !== next.module) plan.restart.push(name);
    else plan.keep.push(name);
  }
  for (const name of before.bots.keys()) if (!after.bots.has(name)) plan.remove.push(name);
  for (const key of FIXED) {
    if (stableJson(pick(before.config, key)) !== stableJson(pick(after.config, key)))
      plan.needRestart.push(key);
  }
  return plan;
}

/**
 * `next` with the settings of {@link FIXED} as `running` has them: what a daemon runs after a
 * reload that applied `next`, so that the next reload compares with the listener, store and
 * sandbox still in use (an edit undone before a restart then asks for none).
 */
export function withFixedOf(running: Config, next: Config): Config {
  const { state, leases, http } = running;
  const { sandbox: _new, ...server } = next.server ?? {};
  const sandbox = running.server?.sandbox;
  const kept = next.server && { ...server, ...(sandbox === undefined ? {} : { sandbox }) };
  return { ...next, state, leases, http, ...(kept ? { server: kept } : {}) } as Config;
}

function pick(config: Config, key: string): unknown {
  return key.split(".").reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], config);
}

/**
 * JSON with object keys sorted (by code unit: a locale collator costs milliseconds to set up), so
 * equal values give equal text whatever their key order.
 */
function stableJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) =>
      v !== null && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(
            Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
          )
        : v,
    ) ?? "undefined"
  );
}

/** A bot as the daemon's reload compares it. */
export function identityOf(
  config: Config,
  bot: { name: string; fingerprint?: string | undefined },
): BotIdentity {
  const entry = config.bots[bot.name];
  return { entry: entry ? entryHash(entry) : "", module: bot.fingerprint ?? "" };
}
