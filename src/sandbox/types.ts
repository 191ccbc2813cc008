/** Public types of the sandbox: its options, the running handle and the control API. */
import type { Clock } from "./core.ts";
import type { FailOptions, PathFilter } from "./faults.ts";
import type { RateBucketName, RateCount, RateRule } from "./http/rate-limit.ts";
import type { RequestLogEntry, ResponseRecord } from "./http/server.ts";
import type { SandboxMessage } from "./message-shape.ts";
import type { OrgInput } from "./org/schema.ts";

export type {
  Clock,
  FailOptions,
  OrgInput,
  PathFilter,
  RateBucketName,
  RateCount,
  RateRule,
  RequestLogEntry,
  ResponseRecord,
};

export interface SandboxOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind; default "127.0.0.1". */
  host?: string;
  /** An org file path (YAML), an org object, or nothing for the small default org. */
  org?: string | OrgInput;
  /** Base clock (ms); `control.advanceClock` adds to it. Default `Date`. */
  clock?: Clock;
  /** Heartbeat period of parked polls; default 45–55 s at random like the server. */
  heartbeatSeconds?: number;
  /**
   * `event_queue_longpoll_timeout_seconds` reported by /register (the client's long-poll HTTP
   * timeout); default 90 like the server. Tests of a client's hung-poll watchdog lower it.
   */
  longpollTimeoutSeconds?: number;
  /** Idle queue lifetime when `queue_lifespan_secs` is not given; default 600. */
  queueTimeoutSeconds?: number;
  /** How often idle queues are collected (real time); default 60. */
  gcIntervalSeconds?: number;
  /**
   * The server's per-account rate limits, counted on the sandbox clock, event-queue calls apart
   * from the others: on by default with the server's rules (200 a minute, 2,000 an hour); give
   * other rules (`[window seconds, calls]` pairs), or `false` to turn them off (a load test that
   * means to exceed what one account may do).
   */
  rateLimit?: boolean | { rules: RateRule[] };
  /** Persist state to this JSON file (loaded at start, written on change and stop). */
  dataFile?: string;
  /** Called after every API response, e.g. to check bodies against the API description. */
  onResponse?: (record: ResponseRecord) => void;
  /**
   * Serve the local chat page at `/chat/` (`bothost dev`): pick a person, post in a channel or to
   * a bot, watch the answers arrive. Its page hands the picked person's sandbox API key to the
   * browser: for a sandbox on this machine only. Default off; the API's behaviour is the same.
   */
  chatPage?: boolean;
}

/** A user or bot as the control API lists it. The API key is the sandbox's own fake credential. */
export interface SandboxUser {
  user_id: number;
  email: string;
  full_name: string;
  role: number;
  is_bot: boolean;
  bot_type: number | null;
  is_active: boolean;
  api_key: string;
  /** An outgoing-webhook or embedded bot's token (its zuliprc's `token=`); absent for others. */
  outgoing_token?: string;
  /** The format the server POSTs to an outgoing-webhook (or embedded) bot; absent for others. */
  outgoing_interface?: "zulip" | "slack";
}

export interface NewSandboxUser {
  email: string;
  full_name: string;
  role?: "owner" | "admin" | "moderator" | "member" | "guest";
  /** Create a bot of this type (owned by `owner`). */
  bot?: "generic" | "incoming" | "outgoing" | "embedded";
  owner?: string;
  api_key?: string;
  /** Channel names to subscribe the new user to. */
  channels?: string[];
  /** User settings, e.g. `{ receives_typing_notifications: false }`. */
  settings?: Record<string, boolean | number | string>;
  /**
   * When the account joined, as an ISO 8601 date no later than the sandbox clock (default: now),
   * e.g. to seed a history with old and new members.
   */
  date_joined?: string;
}

/** An outgoing-webhook bot's service: where and how the server POSTs the messages that trigger it. */
export interface SandboxOutgoingWebhook {
  /** The endpoint URL the server POSTs to. */
  url: string;
  /** `zulip` (JSON) or `slack` (a form body). Default: the bot's, else `zulip`. */
  interface?: "zulip" | "slack";
  /** The token each POST carries (32 letters or digits). Default: the bot's, else a new one. */
  token?: string;
}

export interface SendAsInput {
  type: "stream" | "channel" | "private" | "direct";
  /** As on the wire: a channel name or id, or a list of user ids / emails. */
  to: string | number | (string | number)[];
  topic?: string;
  content: string;
  readBySender?: boolean;
  /** Client name recorded on the message; default "sandbox-control". */
  client?: string;
}

export interface QueueInfo {
  queue_id: string;
  user_id: number;
  email: string;
  event_types: string[] | null;
  narrow: [string, string][];
  all_public_streams: boolean;
  /** Sandbox-clock ms of the last parked GET (or creation). */
  last_connection_time: number;
  parked: boolean;
  pending_events: number;
}

export interface SandboxControl {
  /**
   * Move the sandbox clock forward; runs due scheduled deliveries and a queue GC check. It moves
   * the sandbox alone: in a kit test, whose bots share a `TestClock` with the sandbox, move that
   * (`await clock.advance(ms)`), or the bots' time stays behind the server's.
   */
  advanceClock(ms: number): void;
  /** Current sandbox time in ms. */
  now(): number;
  users(): SandboxUser[];
  apiKeyOf(email: string): string;
  createUser(input: NewSandboxUser): SandboxUser;
  /** Deactivate or reactivate an account (realm_user update events follow). */
  setActive(email: string, active: boolean): void;
  /**
   * Rename the channel named `name` to `newName`, as an administrator's PATCH /streams/{id} does
   * (a `stream` update event, property `name`, to everyone who can see it).
   */
  renameChannel(name: string, newName: string): void;
  /** Change an account's role or full name (realm_user update events follow). */
  updateUser(email: string, changes: { role?: NewSandboxUser["role"]; full_name?: string }): void;
  /**
   * Point an outgoing-webhook (or embedded) bot at `service.url`, as editing the bot's endpoint
   * URL on the server does (a `realm_bot` update event follows); returns the bot as listed.
   */
  setOutgoingWebhook(email: string, service: SandboxOutgoingWebhook): SandboxUser;
  /** Send as any user through the same path as POST /messages; returns the message id. */
  sendAs(email: string, input: SendAsInput): { id: number };
  /** Every stored message (wire-like records, raw Markdown content). */
  messages(): Record<string, unknown>[];
  /**
   * Message `id` as GET /messages serves it to its sender with raw Markdown (`subject`,
   * `display_recipient`, `sender_full_name`…); undefined when there is no such message.
   */
  messageView(id: number): SandboxMessage | undefined;
  queues(): QueueInfo[];
  scheduled(): Record<string, unknown>[];
  /** Garbage-collect a queue now (by id, or every queue of a user). */
  expireQueue(target: string | { email: string }): void;
  failNext(n: number, options: FailOptions): void;
  /**
   * Hold every matching request `ms` before it is served, until `delay(0)`, which also lets the
   * requests held at that moment go on at once. `after: true`: carry the request out first, then
   * hold its answer (what it changed is stored, its events sent), as when the server committed and
   * the answer is slow to come back: a client killed meanwhile never learns of it.
   */
  delay(ms: number, options?: { paths?: PathFilter; methods?: string[]; after?: true }): void;
  /** How many requests `delay` holds now (a change wakes {@link waitFor}). */
  delayed(): number;
  resetConnections(n?: number): void;
  rateLimitNext(n: number, retryAfterSeconds: number): void;
  /** The next GET /events is accepted but never answered (logged with status 0). */
  hangNextPoll(): void;
  /**
   * Cut parked polls and send `restart` events to the queues that take them, as after a server
   * restart; with `featureLevel`, as after an upgrade: the server reports that level from then on.
   */
  restartQueues(options?: { featureLevel?: number }): void;
  /** Turn the rate limits on (the server's rules) or off, or set the rules of every user. */
  setRateLimit(enabled: boolean | { rules: RateRule[] }): void;
  /** Give one account its own rules, as the server's per-user setting does (`undefined`: back to the common ones). */
  setUserRateLimit(email: string, rules: RateRule[] | undefined): void;
  /** Calls counted and refused with a 429 so far for one account, in one bucket. */
  rateLimitCount(email: string, bucket: RateBucketName): RateCount;
  /** Every request so far: method, path below /api/v1, status (-1: connection reset, 0: hung poll). */
  readonly requests: RequestLogEntry[];
  /** Resolve once every outgoing-webhook delivery in flight has finished (and its reply is posted). */
  settleWebhooks(): Promise<void>;
  /** Resolve when `predicate` returns a truthy value (checked on every state change). */
  waitFor<T>(predicate: () => T | undefined | null | false, options?: { timeoutMs?: number }): Promise<T>;
}

export interface Sandbox {
  /** Base URL, e.g. "http://127.0.0.1:40123"; the API is under `${url}/api/v1`. */
  readonly url: string;
  readonly control: SandboxControl;
  stop(): Promise<void>;
}
