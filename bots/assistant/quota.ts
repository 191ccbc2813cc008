/**
 * Each person's use of the model in the last hour: calls and tokens, kept in the bot's state as
 * `[time, tokens]` pairs, so a restart forgets nothing.
 */
import type { KV } from "bothost";

const HOUR = 3_600_000;

export interface QuotaLimits {
  calls: number;
  tokens: number;
}

type Use = [at: number, tokens: number];

export class Quota {
  constructor(
    private readonly state: KV,
    private readonly limits: QuotaLimits,
  ) {}

  async #uses(userId: number, now: number): Promise<Use[]> {
    const all = (await this.state.get<Use[]>(`usage:${userId}`)) ?? [];
    return all.filter(([at]) => at > now - HOUR);
  }

  /** Tokens this person may still use now, or the time (epoch ms) when they may ask again. */
  async left(userId: number, now: number): Promise<{ tokens: number } | { until: number }> {
    const uses = await this.#uses(userId, now);
    const tokens = this.limits.tokens - uses.reduce((sum, [, n]) => sum + n, 0);
    if (uses.length < this.limits.calls && tokens > 0) return { tokens };
    // Free again once enough of the oldest uses leave the hour.
    return { until: (uses[0]?.[0] ?? now) + HOUR };
  }

  /** Count one call of `tokens` tokens. */
  async spend(userId: number, now: number, tokens: number): Promise<void> {
    const uses = await this.#uses(userId, now);
    uses.push([now, tokens]);
    await this.state.set(`usage:${userId}`, uses, { ttlMs: HOUR });
  }
}
