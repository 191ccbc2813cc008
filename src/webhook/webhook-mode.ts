/**
 * The start of an outgoing-webhook bot. It keeps no queue, but a handler still needs the bot's
 * id and the server's limits: register once (the same initial state a queue bot gets), delete
 * that queue at once, and hand the identity to the pipeline. Messages then arrive through the
 * outgoing-webhook route (`outgoing-routes.ts`), which hands them to the same pipeline.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import { serverInfoFrom } from "../api/server-info.ts";
import { identityOf } from "../events/queue-source.ts";
import type { Dispatcher } from "../pipeline/dispatcher.ts";
import { registerOnce } from "./register-once.ts";

export interface WebhookModeOptions {
  client: Client;
  log: Logger;
  dispatcher: Dispatcher;
  backoff?: { initialMs?: number; maxMs?: number };
  /** Aborted when the bot stops. */
  signal: AbortSignal;
}

/** Learn the bot's identity and the server's limits. False when `signal` aborted meanwhile. */
export async function startWebhookMode(o: WebhookModeOptions): Promise<boolean> {
  const reg = await registerOnce(o.client, o.signal, {
    log: o.log,
    ...(o.backoff ? { backoff: o.backoff } : {}),
  });
  if (o.signal.aborted) return false;
  o.dispatcher.identify(serverInfoFrom(reg), await identityOf(reg, o.client));
  o.log.info({ featureLevel: reg.zulip_feature_level }, "ready for outgoing-webhook deliveries");
  return true;
}
