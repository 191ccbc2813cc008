/**
 * Putting events into queues: an event goes to every queue of the users it is for that accepts
 * its type, each queue getting its own copy.
 */
import type { SandboxCore } from "../core.ts";
import type { EventQueue } from "./event-queue.ts";

export type EventBody = Record<string, unknown> & { type: string };
/** Shape an event for one queue; return null to skip that queue. */
export type PerQueue = (queue: EventQueue, event: EventBody) => EventBody | null;

/** Send an event to every queue of the given users that accepts its type. */
export function emitToUsers(
  core: SandboxCore,
  userIds: Iterable<number>,
  event: EventBody,
  perQueue?: PerQueue,
): void {
  const users = new Set(userIds);
  for (const queue of core.queues.all()) {
    if (!users.has(queue.options.userId) || !queue.accepts(event.type)) continue;
    const shaped = perQueue ? perQueue(queue, structuredClone(event)) : structuredClone(event);
    if (shaped) queue.push(shaped);
  }
  core.changed();
}

/** Send an event to the queues of every active user. */
export function emitToAll(core: SandboxCore, event: EventBody): void {
  emitToUsers(
    core,
    core.data.users.filter((u) => u.is_active).map((u) => u.user_id),
    event,
  );
}
