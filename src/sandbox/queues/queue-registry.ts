/**
 * All event queues: creation (UUID4 ids), lookup with the server's ownership rule, deletion and
 * the idle-queue garbage collection.
 */
import { randomUUID } from "node:crypto";
import { ApiError } from "../http/api-error.ts";
import { EventQueue, type QueueOptions } from "./event-queue.ts";

export const badQueueId = (id: string) =>
  new ApiError(400, "BAD_EVENT_QUEUE_ID", `Bad event queue ID: ${id}`, { queue_id: id });

export class QueueRegistry {
  private readonly queues = new Map<string, EventQueue>();

  create(options: QueueOptions, now: number): EventQueue {
    const queue = new EventQueue(randomUUID(), options, now);
    this.queues.set(queue.id, queue);
    return queue;
  }

  /** The queue if it exists and belongs to `userId`; otherwise BAD_EVENT_QUEUE_ID. */
  get(id: string, userId: number): EventQueue {
    const queue = this.queues.get(id);
    if (!queue || queue.options.userId !== userId) throw badQueueId(id);
    return queue;
  }

  find(id: string): EventQueue | undefined {
    return this.queues.get(id);
  }

  all(): EventQueue[] {
    return [...this.queues.values()];
  }

  forUser(userId: number): EventQueue[] {
    return this.all().filter((q) => q.options.userId === userId);
  }

  /** Delete a queue; a parked GET is answered first with the current contents. */
  delete(id: string): void {
    const queue = this.queues.get(id);
    if (!queue) return;
    queue.finishParked();
    this.queues.delete(id);
  }

  /** Remove queues with no parked GET whose last connection is older than their lifespan. */
  collectGarbage(now: number): string[] {
    const removed: string[] = [];
    for (const queue of this.queues.values()) {
      if (queue.parked) continue;
      if (now - queue.lastConnectionTime >= queue.options.lifespanSecs * 1000) {
        this.queues.delete(queue.id);
        removed.push(queue.id);
      }
    }
    return removed;
  }

  /** Stop every timer and answer parked polls (used when the sandbox stops). */
  close(): void {
    for (const queue of this.queues.values()) queue.finishParked();
  }
}
