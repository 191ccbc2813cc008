/**
 * Backtest: run a bot's handlers over the organization's history, every write captured instead of
 * made, and say what the bot would have done to which message.
 *
 * The bot runs as in the daemon (same pipeline, settings and helpers) with a client that sends
 * only reads (plus one register for its identity and the server's limits, whose queue is deleted
 * at once), state in memory, one attempt per message, history handed in oldest first, one message
 * at a time so each captured write belongs to the message being handled. Edits and reactions of
 * the past are not replayed: only the messages as they are now.
 *
 * Time is the history's: while a message's handlers run, `ctx.now()` (and every deadline the bot
 * reads, such as a prompt's) starts at the message's timestamp and moves on in real time, so a
 * rule that depends on the hour judges each message by when it was sent.
 *
 * The rule behind an action is what the handler logs: a log line of its context with a `rule`
 * (string) or `rules` (string array) field names it (the shipped moderation bot logs `rules`).
 */
import { Writable } from "node:stream";
import { type CapturedCall, describeCall } from "../api/capture.ts";
import { createClient } from "../api/create-client.ts";
import type { LoadedBot } from "../bot/load-bots.ts";
import { DEFAULT_LONGPOLL_MARGIN_MS } from "../config/schema.ts";
import { fetchHistory, type HistoryRange } from "../events/history.ts";
import { createLogger } from "../log/create-logger.ts";
import { MemoryStore } from "../state/memory-store.ts";
import { type Clock, realClock } from "../time/clock.ts";
import type { Message } from "../wire/records.ts";
import { BotRuntime } from "./bot-runtime.ts";
import { optionsFromConfig, SERVER_BACKOFF } from "./wire-bot.ts";

export interface BacktestOptions {
  bot: LoadedBot;
  /** The server's URL and the bot's key (the config's, resolved). */
  url: string;
  apiKey: string;
  range: Omit<HistoryRange, "onPage" | "signal">;
  /** What is being done: fetching (messages so far) or running (done of total). */
  onProgress?(phase: "fetch" | "run", done: number, total?: number): void;
  signal?: AbortSignal;
}

/** One message the bot would have acted on (or whose handler failed). */
export interface BacktestFinding {
  id: number;
  /** A permalink to the message on the server. */
  link: string;
  sender: string;
  /** `#channel > topic`, or `direct message`. */
  where: string;
  rules: string[];
  actions: { does: string; call: CapturedCall }[];
  /** The handler threw: its error message. */
  error?: string;
}

export interface BacktestReport {
  bot: string;
  /** Messages the handlers ran over. */
  scanned: number;
  /** The oldest and newest message of the range (ISO 8601), when there were any. */
  from?: string;
  to?: string;
  findings: BacktestFinding[];
  /** Messages per rule (`(no rule)` for actions no log line named). */
  totals: Record<string, number>;
}

const NO_RULE = "(no rule)";

export async function backtest(o: BacktestOptions): Promise<BacktestReport> {
  const { bot } = o;
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    level: "info",
    pretty: false,
    destination: new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
        done();
      },
    }),
  }).child({ bot: bot.name });
  let calls: CapturedCall[] = [];
  const clock = new HistoryClock();
  const client = createClient({
    url: o.url,
    email: bot.config.email!,
    apiKey: o.apiKey,
    logger: log,
    capture: (call) => calls.push(call),
  });
  const runtime = new BotRuntime({
    name: bot.name,
    definition: bot.definition as never,
    settings: bot.settings,
    client,
    store: new MemoryStore(),
    flush: async () => {},
    log,
    ...optionsFromConfig(bot.config),
    ...(bot.events ? { events: bot.events } : {}),
    mode: "backtest",
    retries: { attempts: 1, backoffMs: 1, maxBackoffMs: 1 },
    // No queue is polled; registering once retries like a queue bot's.
    longpollMarginMs: DEFAULT_LONGPOLL_MARGIN_MS,
    backoff: SERVER_BACKOFF,
    clock,
  });
  await runtime.start();
  try {
    const history = await fetchHistory(client, {
      ...o.range,
      ...(o.signal ? { signal: o.signal } : {}),
      onPage: (n) => o.onProgress?.("fetch", n),
    });
    const channels = new Map<number, string>();
    for (const m of history) {
      if (m.stream_id !== undefined && typeof m.display_recipient === "string") {
        channels.set(m.stream_id, m.display_recipient);
      }
    }
    const channelName = (id: number) => channels.get(id);
    const findings: BacktestFinding[] = [];
    const totals: Record<string, number> = {};
    for (const [i, message] of history.entries()) {
      o.signal?.throwIfAborted();
      calls = [];
      lines.length = 0;
      clock.at(message.timestamp * 1000);
      await runtime.deliver({ type: "message", message, flags: message.flags ?? [] });
      const found = finding(o.url, message, calls, lines, channelName);
      if (found) {
        findings.push(found);
        for (const rule of found.rules.length > 0 ? found.rules : found.actions.length > 0 ? [NO_RULE] : []) {
          totals[rule] = (totals[rule] ?? 0) + 1;
        }
      }
      o.onProgress?.("run", i + 1, history.length);
    }
    return {
      bot: bot.name,
      scanned: history.length,
      ...(history.length > 0
        ? {
            from: new Date(history[0]!.timestamp * 1000).toISOString(),
            to: new Date(history.at(-1)!.timestamp * 1000).toISOString(),
          }
        : {}),
      findings,
      totals,
    };
  } finally {
    await runtime.stop(1_000);
  }
}

/**
 * The time of the message being run (from {@link HistoryClock.at}), moving on in real time while
 * its handlers run; before the first message, the real time. Timers wait in real time.
 */
class HistoryClock implements Clock {
  #offset = 0;
  at(ms: number): void {
    this.#offset = ms - realClock.now();
  }
  now(): number {
    return realClock.now() + this.#offset;
  }
  readonly setTimeout = realClock.setTimeout;
  readonly clearTimeout = realClock.clearTimeout;
}

function finding(
  url: string,
  m: Message,
  calls: CapturedCall[],
  logged: Record<string, unknown>[],
  channelName: (id: number) => string | undefined,
): BacktestFinding | undefined {
  const mine = logged.filter((l) => l.messageId === m.id);
  const rules = [
    ...new Set(
      mine.flatMap((l) =>
        Array.isArray(l.rules) ? l.rules.map(String) : typeof l.rule === "string" ? [l.rule] : [],
      ),
    ),
  ];
  const failed = mine.find((l) => l.msg === "handler failed");
  if (calls.length === 0 && !failed) return undefined;
  const error = (failed?.err as { message?: string } | undefined)?.message;
  return {
    id: m.id,
    link: `${url.replace(/\/+$/, "")}/#narrow/id/${m.id}`,
    sender: m.sender_email,
    where:
      m.stream_id !== undefined
        ? `#${channelName(m.stream_id) ?? m.stream_id} > ${m.subject}`
        : "direct message",
    rules,
    actions: calls.map((call) => ({ does: describeCall(call, channelName), call })),
    ...(failed ? { error: error ?? "handler failed" } : {}),
  };
}
