/** The options of a bot's event-queue consumer (queue-consumer.ts), and the states it goes through. */
import type { Logger } from "../api/logger.ts";
import type { Clock } from "../time/clock.ts";
import type { ParsedEvent } from "../wire/events.ts";
import type { RegisterResponse } from "../wire/responses.ts";
import type { PollPacer } from "./poll-pacing.ts";
import type { QueueApi } from "./server-queue.ts";

/** Why a queue was registered; `event_types`: renewed to receive more event types (`QueueConsumer.renew`). */
export type RegisterReason = "start" | "queue_expired" | "ack_rejected" | "watchdog" | "event_types";

export type ConsumerState =
  | "idle"
  | "registering"
  | "polling"
  | "backing_off"
  | "stopping"
  | "stopped"
  | "auth_failed";

export interface QueueConsumerOptions {
  api: QueueApi;
  log: Logger;
  /** After each registration, before any of the new queue's events reach `onEvents`. */
  onRegistered(reg: RegisterResponse, reason: RegisterReason): Promise<void>;
  /** Each batch of events except heartbeats, in queue order, with the id of the queue that brought it. */
  onEvents(events: ParsedEvent[], queueId: string): Promise<void>;
  /** The server refused the bot's key while it polled (a 401): the polling has ended for good. */
  onAuthFailed?(): void;
  /** Resolves when the bot has room for more work; polled before every long-poll. */
  waitForCapacity(signal: AbortSignal): Promise<void>;
  /**
   * True when the bot has room for another batch now. Given, the consumer reads ahead: the next
   * poll goes out as soon as a batch is parsed, while `onEvents` dispatches it.
   */
  hasCapacity?(): boolean;
  /** Settles when the events handed to `onEvents` so far may be acknowledged (saved-events.ts). */
  acknowledgeAfter?(): Promise<void> | undefined;
  /** Spaces polls under sustained traffic so the event-queue budget lasts; none: poll at once. */
  pacer?: PollPacer;
  /** Added to the server's long-poll timeout to make the HTTP timeout (default 10 s). */
  longpollMarginMs?: number;
  /** Backoff for 5xx and network errors: first delay and cap (defaults 500 ms, 30 s). */
  backoff?: { initialMs?: number; maxMs?: number };
  /** What contact times are read from and backoffs wait on. */
  clock: Clock;
  /**
   * Ends the polling when aborted (the bot's own stop signal, so a daemon holds one signal per bot,
   * not two); `stop()` then expects it aborted. Without it the consumer keeps its own.
   */
  signal?: AbortSignal;
}
