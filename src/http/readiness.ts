import { AUTH_REJECTED } from "../api/errors.ts";
import type { StoreFailure } from "../pipeline/store-health.ts";

/**
 * Is every bot able to receive events, and to record what it handles? A queue bot is ready while it polls and has heard from the
 * server within one long-poll period (a heartbeat arrives at the latest by then); a webhook-mode
 * bot is ready once it has learned its identity and the server's limits. A bot that failed to
 * start is not ready, with the reason; so is a bot whose writes the state store's outage fails (a
 * Redis out of reach, the embedded store's disk full), until one of them lands.
 */

/** The part of `BotRuntime.status` readiness reads. */
export interface ReadinessInput {
  name: string;
  state: string;
  lastHeartbeatAt?: number | undefined;
  lastContactAt?: number | undefined;
  longpollMs?: number | undefined;
  /** Why the bot failed to start (its setup threw, …), until it starts: it is then not ready. */
  failure?: string | undefined;
  /** The state store's outage failing the bot's reads or writes, while it lasts. */
  storeFailure?: StoreFailure | undefined;
  /** Cluster mode: why this instance lost the bot's lease, while it has not taken it again. */
  leaseLost?: string | undefined;
  /** Cluster mode: the instance holding the bot's lease, as the last round read it (not this one). */
  leaseHolder?: string | undefined;
  /** The account's call budgets: a server's 429 blocks one until `blockedUntil`. */
  budget?: readonly { bucket: string; blockedUntil?: number | undefined }[] | undefined;
}

/**
 * The server's 429 holds the bot's calls (of `buckets`: its polls, its sends) past `now`: until
 * when, in words, as the status and `/readyz` say it; undefined when none is held.
 */
export function heldByRateLimit(buckets: Blockable, now: number): string | undefined {
  const until = blockedUntil(buckets);
  if (until <= now) return undefined;
  return `the server refused its calls for the account's rate limit (429): none before ${new Date(until).toISOString()}`;
}

type Blockable = readonly { blockedUntil?: number | undefined }[] | undefined;
const blockedUntil = (buckets: Blockable) => Math.max(0, ...(buckets ?? []).map((b) => b.blockedUntil ?? 0));

/** Why a bot stopped for its lost lease is not running, and what comes next (status and `/readyz`). */
export function leaseLostReason(why: string): string {
  return `lease lost: ${why}; stopped here, it runs nowhere known. Once Redis answers, this instance takes the lease again, or stands by if another instance holds it`;
}

export interface BotReadiness {
  bot: string;
  ready: boolean;
  state: string;
  /** Why the bot is not ready (absent when ready). */
  reason?: string;
  /** Milliseconds since the server was last heard from (queue bots). */
  lastContactAgoMs?: number;
  /** The state store fails the bot's writes: since when (ISO 8601), and the last failure's code. */
  store?: { failingSince: string; code: string };
}

export function readinessOf(
  statuses: readonly ReadinessInput[],
  now: number,
): { ready: boolean; bots: BotReadiness[] } {
  const bots = statuses.map((s) => botReadiness(s, now));
  return { ready: bots.every((b) => b.ready), bots };
}

function botReadiness(s: ReadinessInput, now: number): BotReadiness {
  const r = eventsReadiness(s, now);
  const failing = s.storeFailure;
  // A standby bot writes nothing here; a bot not ready for another reason keeps that reason.
  if (!failing || s.state === "standby") return r;
  const store = { failingSince: failing.since, code: failing.code };
  if (!r.ready) return { ...r, store };
  const reason = `the state store fails the bot's writes (${failing.code}) since ${failing.since}: what it handles cannot be recorded`;
  return { ...r, ready: false, reason, store };
}

function eventsReadiness(s: ReadinessInput, now: number): BotReadiness {
  // Failed here but run by another instance (cluster mode): this instance serves what it runs,
  // and a probe taking it out would take those bots' webhooks with it. The status says `failed`.
  if (s.failure !== undefined && s.leaseHolder !== undefined)
    return {
      bot: s.name,
      state: "failed",
      ready: true,
      reason: `${s.failure}; instance ${s.leaseHolder} runs it`,
    };
  if (s.failure !== undefined) return { bot: s.name, state: "failed", ready: false, reason: s.failure };
  const base = { bot: s.name, state: s.state };
  // standby: another instance runs the bot (cluster mode); this one is a ready spare for it.
  if (s.state === "webhook" || s.state === "standby") return { ...base, ready: true };
  const contact = Math.max(s.lastContactAt ?? 0, s.lastHeartbeatAt ?? 0);
  const ago = contact > 0 ? now - contact : undefined;
  const withAgo = ago === undefined ? base : { ...base, lastContactAgoMs: ago };
  if (s.state !== "polling") {
    const lost = s.state === "stopped" && s.leaseLost !== undefined;
    const reason = lost
      ? leaseLostReason(s.leaseLost!)
      : (NOT_POLLING[s.state] ?? `event queue is ${s.state}`);
    return { ...withAgo, ready: false, reason };
  }
  const limit = s.longpollMs ?? 100_000;
  // Its polls wait out a 429 (the account's hour spent, by another client say): no event comes
  // until then, and that is why, not a silent server. A wait within one long-poll period is none.
  const polls = s.budget?.filter((b) => b.bucket === "events");
  const held = heldByRateLimit(polls, now);
  if (held && (ago === undefined || ago > limit || blockedUntil(polls) - now > limit))
    return { ...withAgo, ready: false, reason: held };
  if (ago === undefined || ago > limit) {
    return {
      ...withAgo,
      ready: false,
      reason: `no word from the server for ${Math.round((ago ?? 0) / 1000)} s (more than one long-poll period, ${Math.round(limit / 1000)} s)`,
    };
  }
  return { ...withAgo, ready: true };
}

/** Why a bot a reload restarts is not ready: its old version stops, then its new one starts. */
export const RELOADING = "a reload restarts it: its old version stops, then its new version starts";

const NOT_POLLING: Record<string, string> = {
  idle: "not started yet",
  registering: "registering an event queue",
  backing_off: "the event queue failed; retrying with backoff",
  auth_failed: AUTH_REJECTED,
  reloading: RELOADING,
  stopping: "stopped",
  stopped: "stopped",
};
