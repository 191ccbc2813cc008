/** Helpers for event-queue tests: register a queue and read it without blocking. */
import { type Caller, expect } from "./fixture.ts";

export interface Queue {
  id: string;
  caller: Caller;
  /** Non-blocking read that acknowledges nothing (last_event_id = given, default -1). */
  peek(lastEventId?: number): Promise<Record<string, unknown>[]>;
}

export async function openQueue(caller: Caller, extra: Record<string, unknown> = {}): Promise<Queue> {
  const body = await caller.register({ fetch_event_types: [], ...extra });
  const id = body.queue_id as string;
  return {
    id,
    caller,
    async peek(lastEventId = -1) {
      const reply = await caller.get("/events", {
        queue_id: id,
        last_event_id: lastEventId,
        dont_block: true,
      });
      expect(reply.status, reply.text).toBe(200);
      return reply.body.events;
    },
  };
}
