/**
 * Is every bot able to receive events? A queue bot is ready while it polls and has heard from the
 * server within one long-poll period (a heartbeat arrives at the latest by then); a webhook-mode
 * bot is ready once it has learned its identity and the server's limits. A bot that failed to
 * start is not ready, with the reason.
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
}

export interface BotReadiness {
  bot: string;
  ready: boolean;
  state: string;
  /** Why the bot is not ready (absent when ready). */
  reason?: string;
  /** Milliseconds since the server was last heard from (queue bots). */
  lastContactAgoMs?: number;
}

export function readinessOf(
  statuses: readonly ReadinessInput[],
  now: number,
): { ready: boolean; bots: BotReadiness[] } {
  const bots = statuses.map((s) => botReadiness(s, now));
  return { ready: bots.every((b) => b.ready), bots };
}

function botReadiness(s: ReadinessInput, now: number): BotReadiness {
  if (s.failure !== undefined) return { bot: s.name, state: "failed", ready: false, reason: s.failure };
  const base = { bot: s.name, state: s.state };
  // standby: another instance runs the bot (cluster mode); this one is a ready spare for it.
  if (s.state === "webhook" || s.state === "standby") return { ...base, ready: true };
  const contact = Math.max(s.lastContactAt ?? 0, s.lastHeartbeatAt ?? 0);
  const ago = contact > 0 ? now - contact : undefined;
  const withAgo = ago === undefined ? base : { ...base, lastContactAgoMs: ago };
  if (s.state !== "polling") {
    return { ...withAgo, ready: false, reason: NOT_POLLING[s.state] ?? `event queue is ${s.state}` };
  }
  const limit = s.longpollMs ?? 100_000;
  if (ago === undefined || ago > limit) {
    return {
      ...withAgo,
      ready: false,
      reason: `no word from the server for ${Math.round((ago ?? 0) / 1000)} s (more than one long-poll period, ${Math.round(limit / 1000)} s)`,
    };
  }
  return { ...withAgo, ready: true };
}

const NOT_POLLING: Record<string, string> = {
  idle: "not started yet",
  registering: "registering an event queue",
  backing_off: "the event queue failed; retrying with backoff",
  auth_failed: "the server rejected the bot's credentials (fix the API key and restart)",
  stopping: "stopped",
  stopped: "stopped",
};
