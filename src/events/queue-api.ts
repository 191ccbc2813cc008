/**
 * The queue consumer's view of the server, over one bot's client. Polls are not marked
 * idempotent: the consumer, not the client, decides how to recover (backoff, watchdog, new queue).
 */
import type { Client } from "../api/create-client.ts";
import type { RegisterResponse } from "../wire/responses.ts";
import type { QueueApi } from "./queue-consumer.ts";

export function queueApiFor(
  client: Client,
  register: (signal: AbortSignal) => Promise<RegisterResponse>,
): QueueApi {
  return {
    register,
    poll: async (queue_id, last_event_id, { signal, timeoutMs }) => {
      const body = await client.request<{ events: unknown[] }>(
        "GET",
        "/events",
        { queue_id, last_event_id },
        { signal, timeoutMs, idempotent: false },
      );
      return Array.isArray(body.events) ? body.events : [];
    },
    deleteQueue: (queueId) => client.events.deleteQueue(queueId),
  };
}
