/**
 * The sandbox's composition root: its state, clock and queues, and the one "something changed"
 * signal that persistence and `control.waitFor` listen to.
 */
import type { SandboxClock } from "./clock.ts";
import { QueueRegistry } from "./queues/queue-registry.ts";
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
    const secs = this.options.heartbeatSeconds ?? 45 + Math.floor(Math.random() * 11);
    return secs * 1000;
  }

  nowSeconds(): number {
    return this.clock.seconds();
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
