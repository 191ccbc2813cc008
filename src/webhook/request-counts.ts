/**
 * What each inbound webhook was sent since the daemon started, by how it was answered: what an
 * operator reads in `bothost status` to tell "nothing came" from "it came and was refused". Kept
 * by the listener, per bot and webhook name, so a reload that swaps a bot's runtime keeps them.
 */

/** One webhook's requests since the daemon started (a reload keeps them). */
export interface WebhookRequests {
  /** Requests to its route (any method). */
  requests: number;
  /** Answered 2xx: handled (a repeat of one handled already included). */
  ok: number;
  /** Answered 4xx: a wrong method, a body too large, a bad signature or token, a body or key that could not be read. */
  refused: number;
  /** Answered 500: the handler threw or timed out (the sender may retry). */
  failed: number;
  /**
   * Answered 503: the bot not connected yet, stopping or reloading, a run with the same key under
   * way, or no room for it (its account's call budget spent, or too many of its handlers running).
   */
  unavailable: number;
  /** ISO 8601: the last request's answer. */
  lastAt: string;
}

export class WebhookRequestCounts {
  readonly #byBot = new Map<string, Map<string, WebhookRequests>>();

  /** Webhook `name` of bot `bot` answered a request with `status`, at `at` (epoch ms). */
  count(bot: string, name: string, status: number, at: number): void {
    const byName = this.#byBot.get(bot) ?? new Map<string, WebhookRequests>();
    this.#byBot.set(bot, byName);
    let c = byName.get(name);
    if (c === undefined) {
      c = { requests: 0, ok: 0, refused: 0, failed: 0, unavailable: 0, lastAt: "" };
      byName.set(name, c);
    }
    c.requests++;
    if (status < 300) c.ok++;
    else if (status === 503) c.unavailable++;
    else if (status >= 500) c.failed++;
    else c.refused++;
    c.lastAt = new Date(at).toISOString();
  }

  /** Bot `bot`'s webhooks that were sent anything, by name (copies); undefined when none was. */
  of(bot: string): Record<string, WebhookRequests> | undefined {
    const byName = this.#byBot.get(bot);
    if (byName === undefined) return undefined;
    return Object.fromEntries([...byName].map(([name, c]) => [name, { ...c }]));
  }
}
