/**
 * A real event queue on the sandbox for one account, read without blocking: tests use it to
 * watch what the server sends (typing events from a bot) or to feed real events to a helper.
 */
import { type Client, createClient } from "../../src/api/create-client.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { RegisterResponse } from "../../src/wire/responses.ts";

export interface TestQueue {
  client: Client;
  register: RegisterResponse;
  /** Events that arrived since the last call (never blocks). */
  drain(): Promise<{ type: string; [key: string]: unknown }[]>;
}

export async function openQueue(sandbox: Sandbox, email: string, eventTypes: string[]): Promise<TestQueue> {
  const client = createClient({ url: sandbox.url, email, apiKey: sandbox.control.apiKeyOf(email) });
  const register = await client.events.register({
    event_types: eventTypes,
    fetch_event_types: ["realm", "realm_user"],
    client_capabilities: {
      notification_settings_null: true,
      stream_typing_notifications: true,
      empty_topic_name: true,
    },
  });
  let last = register.last_event_id;
  return {
    client,
    register,
    async drain() {
      const { events } = await client.events.get({
        queue_id: register.queue_id!,
        last_event_id: last,
        dont_block: true,
      });
      for (const e of events) last = Math.max(last, e.id ?? last);
      return events as { type: string; [key: string]: unknown }[];
    },
  };
}
