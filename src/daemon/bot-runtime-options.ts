/**
 * What one bot's runtime is built from: its config entry's settings (`optionsFromConfig`) and the
 * collaborators the daemon gives it (client, store, log, clock, letters…).
 */
import type { Logger } from "pino";
import type { CaptureLog } from "../api/capture.ts";
import type { Client } from "../api/create-client.ts";
import type { SharedAccount } from "../bot/commands/shared-account.ts";
import type { BotDefinition } from "../bot/define-bot.ts";
import type { BotConfig } from "../config/schema.ts";
import type { RetryRequests } from "../events/dead-letter-source.ts";
import type { RuntimeMetricsSink } from "../http/bothost-metrics.ts";
import type { RetryPolicy } from "../pipeline/handler-failures.ts";
import type { DeadLetters } from "../state/dead-letters.ts";
import type { StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import type { Narrow } from "../wire/records.ts";
import type { ServerCheckResult } from "./server-check.ts";

/** Retry delays for a server that is down or failing (registration and polls): first and cap. */
export const SERVER_BACKOFF = Object.freeze({ initialMs: 500, maxMs: 30_000 });

/** What one bot is built from (the daemon fills it from the bot's config). */
export interface BotRuntimeOptions {
  name: string;
  definition: BotDefinition<never, never>;
  settings: unknown;
  client: Client;
  /** The root store; the bot gets `<name>/kv` for ctx.state and `<name>/runtime` for the ledger. */
  store: StateStore;
  /** Make the store's writes durable against a machine crash (coalesced by the caller). */
  flush(): Promise<void>;
  /** Make the store's writes survive a crash of this process (cheaper than `flush`); default `flush`. */
  commit?(): Promise<void>;
  /** The store's synchronous commit, where it has one (a solo daemon's FileStore): see LedgerCommits. */
  syncCommit?: { ready(): boolean; commit(): boolean };
  log: Logger;
  events?: readonly string[];
  narrow?: Narrow;
  allPublicStreams?: boolean;
  ownMessages: boolean;
  concurrency: number;
  handlerTimeoutMs: number;
  replay: { maxMessages: number; maxAgeMs: number };
  /** Content over max_message_length: `split` into several messages, or `reject`. */
  longMessages: "split" | "reject";
  /** The config's `command_prefix`: commands also run from messages starting with it. */
  commandPrefix?: string;
  /** The daemon's other bots on this bot's account, and this bot's place in the config. */
  account?: { shared: SharedAccount; order: number };
  /** The config's `webhooks` names (each must be one the module declares), with their places in it. */
  webhookNames?: ReadonlyMap<string, string | undefined>;
  /** The config has no `http` listener: the module's inbound webhooks cannot be reached (a warning). */
  noListener?: boolean;
  /** Added to the server's long-poll timeout to make a poll's HTTP timeout (config `longpoll_margin`). */
  longpollMarginMs: number;
  /** Retry delays for a server that is down or failing ({@link SERVER_BACKOFF} unless a test tunes them). */
  backoff: { initialMs: number; maxMs: number };
  /** What every part of the bot reads the time from and waits on. */
  clock: Clock;
  /**
   * `"webhook"`: messages arrive by outgoing-webhook POSTs (`deliver`); no event queue is kept.
   * `"backtest"`: no queue, no jobs, no onStart: history is handed in by `deliver` (backtest.ts).
   */
  mode?: "queue" | "webhook" | "backtest";
  /** Counts events, handler durations, registrations, replays and gaps. */
  metrics?: RuntimeMetricsSink;
  /** How a handler that throws is run again (config `retries`). */
  retries: RetryPolicy;
  /** `dry_run: true`: the writes captured (report claims then stay in memory, so they are not kept). */
  captured?: CaptureLog;
  /** Where events whose every attempt failed are kept, and replayed from (`bothost failed retry`). */
  letters?: DeadLetters;
  /** Where the bot hears of later retry requests (the daemon's one watcher); default: at start only. */
  retryRequests?: RetryRequests;
  /**
   * The daemon's id, new at each start of the process and kept across reloads: marks the letters
   * of deliveries whose run still goes here (see DeadLetter.runningIn); default one per runtime.
   */
  daemonId?: string;
  /**
   * Run at each start before the bot's state is read (`server-check.ts`): rejects when the state
   * belongs to another server. `queue`: the bot registers a queue next.
   */
  checkServer?(signal: AbortSignal, queue: boolean): Promise<ServerCheckResult>;
}

/**
 * A bot's config entry as its runtime's options (the parts the YAML decides); `listening` false: the
 * config has no `http` listener (its inbound webhooks are warned of); `places`: its webhooks' places.
 */
export function optionsFromConfig(c: BotConfig, listening?: boolean, places?: ReadonlyMap<string, string>) {
  return {
    noListener: listening === false,
    ...(c.events ? { events: c.events } : {}),
    ...(c.narrow ? { narrow: c.narrow.map(([op, operand]) => [op, operand] as [string, string]) } : {}),
    ...(c.all_public_streams !== undefined ? { allPublicStreams: c.all_public_streams } : {}),
    ownMessages: c.own_messages,
    concurrency: c.concurrency,
    handlerTimeoutMs: c.handler_timeout,
    replay: { maxMessages: c.replay.max_messages, maxAgeMs: c.replay.max_age },
    longMessages: c.long_messages,
    ...(c.command_prefix !== undefined ? { commandPrefix: c.command_prefix } : {}),
    ...(c.outgoing_webhook ? { mode: "webhook" as const } : {}),
    ...(c.webhooks ? { webhookNames: new Map(Object.keys(c.webhooks).map((n) => [n, places?.get(n)])) } : {}),
    retries: {
      attempts: c.retries.attempts,
      backoffMs: c.retries.backoff,
      maxBackoffMs: c.retries.max_backoff,
    },
  };
}
