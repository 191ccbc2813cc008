/**
 * The start of an outgoing-webhook bot. It keeps no queue, but a handler still needs the bot's
 * id and the server's limits: register once (the same initial state a queue bot gets), delete
 * that queue at once, and hand the identity to the pipeline. Messages then arrive through the
 * outgoing-webhook route (`outgoing-routes.ts`), which hands them to the same pipeline.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import { isAuthError, isRateLimitError } from "../api/errors.ts";
import { serverInfoFrom } from "../api/server-info.ts";
import { backoffDelay, sleep } from "../api/sleep.ts";
import { registerParams } from "../events/register-params.ts";
import { identityOf } from "../events/server-queue.ts";
import type { BotContexts } from "../pipeline/bot-contexts.ts";
import type { Clock } from "../time/clock.ts";
import type { RegisterResponse } from "../wire/responses.ts";
import type { CacheSnapshot, SnapshotTypes } from "./cache-snapshot.ts";

export interface WebhookModeOptions {
  client: Client;
  log: Logger;
  /** Told the bot's identity and the server's limits. */
  contexts: BotContexts;
  /** Retry delays for a server that is down or failing: first delay and cap. */
  backoff: { initialMs: number; maxMs: number };
  /** What the retry delays wait on. */
  clock: Clock;
  /** Aborted when the bot stops. */
  signal: AbortSignal;
  /** A registration this start already made (the daemon's server check): used instead of a new one. */
  registered?: RegisterResponse | undefined;
  /** The bot's caches, seeded from the registration (cache-snapshot.ts), with the bot's event types. */
  caches?: { snapshot: CacheSnapshot; eventTypes: SnapshotTypes | undefined };
}

/** Learn the bot's identity and the server's limits. False when `signal` aborted meanwhile. */
export async function startWebhookMode(o: WebhookModeOptions): Promise<boolean> {
  const types = o.caches?.snapshot.typesFor(o.caches.eventTypes);
  // The server check's registration asked for heartbeats alone: enough unless the bot keeps caches.
  const reg = (types === undefined && o.registered) || (await registerOnce(o, types));
  if (o.signal.aborted) return false;
  const self = await identityOf(reg, o.client);
  o.contexts.identify(serverInfoFrom(reg), self);
  o.caches?.snapshot.seeded(reg, self);
  o.log.info({ featureLevel: reg.zulip_feature_level }, "ready for outgoing-webhook deliveries");
  return true;
}

/**
 * Register, then delete the queue (nothing will poll it). Like a queue bot's first registration,
 * it retries until the server answers; a 401 or the signal ends it.
 */
export async function registerOnce(
  {
    client,
    signal,
    log,
    backoff,
    clock,
  }: Pick<WebhookModeOptions, "client" | "signal" | "log" | "backoff" | "clock">,
  // Heartbeats are queued whatever the types; asking for them alone keeps the queue empty.
  eventTypes: SnapshotTypes = ["heartbeat"],
): Promise<RegisterResponse> {
  const { initialMs, maxMs } = backoff;
  for (let attempt = 1; ; attempt++) {
    try {
      const reg = await client.events.register(registerParams({ eventTypes }), { signal });
      // Deleted without waiting: nothing depends on it, and a bot's start waits for this call.
      // Left behind (the call failed), the server drops the idle queue after ten minutes.
      if (reg.queue_id) void client.events.deleteQueue(reg.queue_id).catch(() => {});
      return reg;
    } catch (err) {
      if (signal.aborted || isAuthError(err)) throw err;
      const delayMs = isRateLimitError(err)
        ? err.retryAfterMs
        : backoffDelay(attempt, initialMs, maxMs, Math.random);
      log.warn(
        { attempt, delayMs: Math.round(delayMs), err: err instanceof Error ? err.message : String(err) },
        "could not reach the server to learn the bot's identity; retrying",
      );
      await sleep(clock, delayMs, signal);
    }
  }
}
