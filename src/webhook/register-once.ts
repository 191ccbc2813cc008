/**
 * A webhook-mode bot's one look at the server: the register response carries the bot's id and
 * the server's limits; the queue it creates is deleted at once (nothing will poll it).
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import { isAuthError, isRateLimitError } from "../api/errors.ts";
import { backoffDelay, realPause } from "../api/sleep.ts";
import { registerParams } from "../events/register-params.ts";
import type { RegisterResponse } from "../wire/responses.ts";

export interface RegisterOnceOptions {
  log?: Logger;
  /** Retry delays for a server that is down or failing (defaults 500 ms, 30 s). */
  backoff?: { initialMs?: number; maxMs?: number };
}

/**
 * Register with the same initial state a queue bot asks for, then delete the queue. Like a queue
 * bot's first registration, it retries until the server answers; a 401 or `signal` ends it.
 *
 * @example
 * ```ts
 * const reg = await registerOnce(client, signal, { log });
 * const info = serverInfoFrom(reg); // limits, typing timings, feature level
 * ```
 */
export async function registerOnce(
  client: Client,
  signal: AbortSignal,
  options: RegisterOnceOptions = {},
): Promise<RegisterResponse> {
  const { initialMs = 500, maxMs = 30_000 } = options.backoff ?? {};
  for (let attempt = 1; ; attempt++) {
    try {
      // Heartbeats are queued whatever the types; asking for them alone keeps the queue empty.
      const reg = await client.events.register(registerParams({ eventTypes: ["heartbeat"] }), { signal });
      if (reg.queue_id) await client.events.deleteQueue(reg.queue_id).catch(() => {});
      return reg;
    } catch (err) {
      if (signal.aborted || isAuthError(err)) throw err;
      const delayMs = isRateLimitError(err)
        ? err.retryAfterMs
        : backoffDelay(attempt, initialMs, maxMs, Math.random);
      options.log?.warn(
        { attempt, delayMs: Math.round(delayMs), err: err instanceof Error ? err.message : String(err) },
        "could not reach the server to learn the bot's identity; retrying",
      );
      await realPause(delayMs, signal);
    }
  }
}
