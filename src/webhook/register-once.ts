/**
 * A webhook-mode bot's one look at the server: the register response carries the bot's id and
 * the server's limits; the queue it creates is deleted at once (nothing will poll it).
 */
import type { Client } from "../api/create-client.ts";
import { registerParams } from "../daemon/register-params.ts";
import type { RegisterResponse } from "../wire/responses.ts";

/**
 * Register with the same initial state a queue bot asks for, then delete the queue.
 *
 * @example
 * ```ts
 * const reg = await registerOnce(client, signal);
 * const info = serverInfoFrom(reg); // limits, typing timings, feature level
 * ```
 */
export async function registerOnce(client: Client, signal: AbortSignal): Promise<RegisterResponse> {
  // Heartbeats are queued whatever the types; asking for them alone keeps the queue empty.
  const reg = await client.events.register(registerParams({ eventTypes: ["heartbeat"] }), { signal });
  if (reg.queue_id) await client.events.deleteQueue(reg.queue_id).catch(() => {});
  return reg;
}
