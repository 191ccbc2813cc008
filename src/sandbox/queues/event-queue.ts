/**
 * Event queues, as the server's ClientDescriptor + EventQueue: per-queue event ids from 0,
 * destructive acknowledgement, at most one parked long-poll, registration options that decide
 * which events a queue takes.
 */
import { randomUUID } from "node:crypto";
import { ApiError } from "../http/api-error.ts";

export const CAPABILITY_KEYS = [
  "notification_settings_null",
  "bulk_message_deletion",
  "user_avatar_url_field_optional",
  "stream_typing_notifications",
  "linkifier_url_template",
  "user_list_incomplete",
  "include_deactivated_groups",
  "archived_channels",
  "empty_topic_name",
  "simplified_presence_events",
] as const;
export type ClientCapabilities = Record<(typeof CAPABILITY_KEYS)[number], boolean>;

export interface QueueOptions {
  userId: number;
  /** `null` means every event type. */
  eventTypes: string[] | null;
  narrow: [string, string][];
  allPublicStreams: boolean;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  capabilities: ClientCapabilities;
  lifespanSecs: number;
  clientName: string;
}

export type QueuedEvent = { id: number; type: string } & Record<string, unknown>;

/** A queue as a stop writes it to the data file, and the next start reads it back. */
export interface StoredQueue {
  id: string;
  options: QueueOptions;
  lastConnectionTime: number;
  events: QueuedEvent[];
  nextEventId: number;
  newestPrunedId: number;
}

/** A GET /events waiting for events; `finish` answers it with the queue's current contents. */
export interface ParkedPoll {
  finish(events: QueuedEvent[]): void;
  /** Drop the connection without an answer (what a server restart does to parked polls). */
  cut(): void;
}

export class EventQueue {
  readonly events: QueuedEvent[] = [];
  private nextEventId = 0;
  newestPrunedId = -1;
  parked: ParkedPoll | null = null;
  heartbeatTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly id: string,
    readonly options: QueueOptions,
    /** Updated when a GET parks (and at creation): the only thing that keeps a queue alive. */
    public lastConnectionTime: number,
  ) {}

  /** What a restart keeps: everything but the parked poll and its timer. */
  toStored(): StoredQueue {
    const { id, options, lastConnectionTime, events, nextEventId, newestPrunedId } = this;
    return { id, options, lastConnectionTime, events: [...events], nextEventId, newestPrunedId };
  }

  static fromStored(stored: StoredQueue): EventQueue {
    const queue = new EventQueue(stored.id, stored.options, stored.lastConnectionTime);
    queue.events.push(...stored.events);
    queue.nextEventId = stored.nextEventId;
    queue.newestPrunedId = stored.newestPrunedId;
    return queue;
  }

  /** Does this queue take events of this type? (Heartbeats bypass this; restarts do not.) */
  accepts(type: string): boolean {
    return this.options.eventTypes === null || this.options.eventTypes.includes(type);
  }

  /** Append an event with the next id and answer a parked poll at once. */
  push(event: Record<string, unknown> & { type: string }): void {
    this.events.push({ ...event, id: this.nextEventId++ });
    this.finishParked();
  }

  /** Drop every event with id ≤ lastEventId (the acknowledgement). */
  prune(lastEventId: number): void {
    while (this.events.length > 0 && this.events[0]!.id <= lastEventId) {
      this.newestPrunedId = this.events.shift()!.id;
    }
  }

  park(poll: ParkedPoll, now: number, heartbeatMs: number, onHeartbeat: () => void): void {
    this.finishParked();
    this.parked = poll;
    this.lastConnectionTime = now;
    this.heartbeatTimer = setTimeout(onHeartbeat, heartbeatMs);
    this.heartbeatTimer.unref?.();
  }

  /** The client went away: forget the poll without answering it. */
  disconnect(poll: ParkedPoll): void {
    if (this.parked === poll) this.unpark();
  }

  /** Drop the parked poll's connection without answering it. */
  cutParked(): void {
    this.unpark()?.cut();
  }

  /** Answer the parked poll (if any) with everything currently queued. */
  finishParked(): void {
    this.unpark()?.finish([...this.events]);
  }

  private unpark(): ParkedPoll | null {
    const poll = this.parked;
    this.parked = null;
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = null;
    return poll;
  }
}

export const badQueueId = (id: string) =>
  new ApiError(400, "BAD_EVENT_QUEUE_ID", `Bad event queue ID: ${id}`, { queue_id: id });

/** All queues: UUID4 ids, lookup with the server's ownership rule, idle-queue garbage collection. */
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

  /**
   * Take back the queues a stop wrote, as the server reloads the queues it dumped: their ids,
   * unacknowledged events and idle time (from their last parked poll) are kept.
   */
  restore(stored: readonly StoredQueue[]): EventQueue[] {
    const queues = stored.map((s) => EventQueue.fromStored(s));
    for (const queue of queues) this.queues.set(queue.id, queue);
    return queues;
  }

  all(): EventQueue[] {
    return [...this.queues.values()];
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
