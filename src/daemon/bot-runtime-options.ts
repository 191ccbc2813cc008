/** What one bot's runtime is built from (the daemon fills it from the bot's config). */

import type { Logger } from "pino";
import type { CaptureLog } from "../api/capture.ts";
import type { Client } from "../api/create-client.ts";
import type { BotDefinition } from "../bot/define-bot.ts";
import type { RuntimeMetricsSink } from "../http/bothost-metrics.ts";
import type { RetryPolicy } from "../pipeline/retries.ts";
import type { DeadLetters } from "../state/dead-letters.ts";
import type { StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import type { Narrow } from "../wire/records.ts";

export interface BotRuntimeOptions {
  name: string;
  definition: BotDefinition<never, never>;
  settings: unknown;
  client: Client;
  /** The root store; the bot gets `<name>/kv` for ctx.state and `<name>/runtime` for the ledger. */
  store: StateStore;
  /** Make the store's writes durable against a machine crash (coalesced by the caller). */
  flush(): Promise<void>;
  /**
   * Make the store's writes survive a crash of this process (cheaper than `flush`): the ledger
   * commits every handled message this way before its conversation moves on. Default `flush`.
   */
  commit?(): Promise<void>;
  /**
   * The store's synchronous commit, where it has one (the FileStore of a solo daemon): a
   * conversation's next message then starts at once, and the completions of each turn of the
   * event loop are committed at its end, before any handler's I/O can complete (see
   * `LedgerCommits.finish`, src/pipeline/ledger-commits.ts). Without it, the next message
   * waits for `commit()`.
   */
  syncCommit?: { ready(): boolean; commit(): boolean };
  log: Logger;
  events?: readonly string[];
  narrow?: Narrow;
  allPublicStreams?: boolean;
  ownMessages: boolean;
  concurrency: number;
  handlerTimeoutMs: number;
  replay: { maxMessages: number; maxAgeMs: number };
  /** Stop polling while this many events are waiting or running (bounded memory). */
  maxInFlight?: number;
  /** Content over max_message_length: `split` into several messages (default) or `reject`. */
  longMessages?: "split" | "reject";
  longpollMarginMs?: number;
  backoff?: { initialMs?: number; maxMs?: number };
  /** The clock of the bot's scheduler (recurring bookings, cron jobs, ctx.schedule); default real. */
  clock?: Clock;
  /**
   * `"webhook"`: messages arrive by outgoing-webhook POSTs (`deliver`); no event queue is kept.
   * `"backtest"`: no queue, no jobs, no onStart: history is handed in by `deliver` (backtest.ts).
   */
  mode?: "queue" | "webhook" | "backtest";
  /** Counts events, handler durations, registrations, replays and gaps (see src/http/bothost-metrics.ts). */
  metrics?: RuntimeMetricsSink;
  /** How a handler that throws is run again (config `retries`); default: never. */
  retries?: RetryPolicy;
  /**
   * `dry_run: true`: the client captures the bot's writes into this log. Report claims then live
   * in memory only, so turning the dry run off later reports what it only pretended to.
   */
  captured?: CaptureLog;
  /** Where events whose every attempt failed are kept, and replayed from (`bothost failed retry`). */
  letters?: DeadLetters;
}
