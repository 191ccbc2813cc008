/**
 * The sandbox's composition root: its state, clock and queues, and the one "something changed"
 * signal that persistence and `control.waitFor` listen to.
 */
import { QueueRegistry } from "./queues/event-queue.ts";
import type { MessageRecord, SandboxData } from "./state/data.ts";

export interface CoreOptions {
  /** Fixed heartbeat period; `undefined` means 45–55 s at random, like the server. */
  heartbeatSeconds: number | undefined;
  queueTimeoutSeconds: number;
  /** Reported by /register as `event_queue_longpoll_timeout_seconds`; undefined means 90. */
  longpollTimeoutSeconds?: number | undefined;
  gcIntervalSeconds: number;
}

export class SandboxCore {
  readonly queues = new QueueRegistry();
  /** Base URL (`http://host:port`), known once the server listens. */
  url = "";
  private readonly listeners = new Set<() => void>();
  /** Run after every new message is stored and delivered (outgoing webhooks listen here). */
  readonly afterSend: ((msg: MessageRecord) => void)[] = [];

  constructor(
    public data: SandboxData,
    readonly clock: SandboxClock,
    readonly options: CoreOptions,
  ) {}

  heartbeatMs(): number {
    return (this.options.heartbeatSeconds ?? 45 + Math.floor(Math.random() * 11)) * 1000;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Call after any state change (a message, a queue event, a setting). */
  changed(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/** Anything with `now()` in milliseconds since the epoch, e.g. `Date` or a test's fake clock. */
export interface Clock {
  now(): number;
}

/**
 * The sandbox's time: an injectable base clock plus an offset that `control.advanceClock(ms)`
 * grows, so tests can jump ahead without touching the base clock.
 */
export class SandboxClock implements Clock {
  private offsetMs = 0;

  constructor(private readonly base: Clock = Date) {}

  now(): number {
    return this.base.now() + this.offsetMs;
  }

  /** Whole UNIX seconds, the unit of every `*_timestamp` on the wire. */
  seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/** What the sandbox reports as its server version (a dev-build string, like a main-branch server). */
export const SANDBOX_ZULIP_VERSION = "12.0-dev+sandbox";
export const SANDBOX_MERGE_BASE = "";
/** Bumped on every start, as the server's `server_generation`. */
export const SERVER_GENERATION = Math.floor(Date.now() / 1000);

/** The event a restart puts in each queue that takes it: the server's version and feature level. */
export const restartEvent = (featureLevel: number) => ({
  type: "restart",
  zulip_version: SANDBOX_ZULIP_VERSION,
  zulip_merge_base: SANDBOX_MERGE_BASE,
  zulip_feature_level: featureLevel,
  server_generation: SERVER_GENERATION,
});
