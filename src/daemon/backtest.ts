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
 *
 * People are shown by name, as an operator reads a report: most organizations hide emails from
 * bots, so a message gives the bot `user12@host` as its sender's email.
 */
import { Writable } from "node:stream";
import { type CapturedCall, describeCall, directRecipients } from "../api/capture.ts";
import { createClient } from "../api/create-client.ts";
import type { UsersApi } from "../api/resources/users.ts";
import type { LoadedBot } from "../bot/load-bots.ts";
import { DEFAULT_LONGPOLL_MARGIN_MS } from "../config/schema.ts";
import { fetchHistory, type HistoryRange } from "../events/history.ts";
import { createLogger } from "../log/create-logger.ts";
import { MemoryStore } from "../state/memory-store.ts";
import { type Clock, realClock } from "../time/clock.ts";
import type { Message } from "../wire/records.ts";
import { BotRuntime } from "./bot-runtime.ts";
import { optionsFromConfig, SERVER_BACKOFF } from "./bot-runtime-options.ts";

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
  /** The sender's name. */
  sender: string;
  senderId: number;
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
    const found: Found[] = [];
    for (const [i, message] of history.entries()) {
      o.signal?.throwIfAborted();
      calls = [];
      lines.length = 0;
      clock.at(message.timestamp * 1000);
      // Until nothing runs: what a dialog this message answered does next is this message's.
      await runtime.deliver({ type: "message", message, flags: message.flags ?? [] }, { idle: true });
      const f = judged(message, calls, lines);
      if (f) found.push(f);
      o.onProgress?.("run", i + 1, history.length);
    }
    // Described once the run is over: the people its direct messages go to are then all known.
    const recipients = found.flatMap((f) => f.calls.flatMap(directRecipients));
    const personName = await peopleNames(client.users, history, recipients, o.signal);
    const findings = found.map((f) => finding(o.url, f, channelName, personName));
    const totals: Record<string, number> = {};
    for (const f of findings) {
      for (const rule of f.rules.length > 0 ? f.rules : f.actions.length > 0 ? [NO_RULE] : []) {
        totals[rule] = (totals[rule] ?? 0) + 1;
      }
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

/** A message the bot would have acted on (or whose handler failed), before it is described. */
interface Found {
  message: Message;
  calls: CapturedCall[];
  rules: string[];
  /** The handler threw: its error message. */
  error?: string;
}

/** What the handlers of `m` did: the calls they made, the rules they logged, whether they failed. */
function judged(m: Message, calls: CapturedCall[], logged: Record<string, unknown>[]): Found | undefined {
  // A handler's lines while `m` was run: its own run's, or the run of a dialog it answered (whose
  // lines name the message that began the dialog). Nothing else runs meanwhile.
  const mine = logged.filter((l) => l.messageId !== undefined);
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
  return { message: m, calls, rules, ...(failed ? { error: error ?? "handler failed" } : {}) };
}

function finding(
  url: string,
  { message: m, calls, rules, error }: Found,
  channelName: (id: number) => string | undefined,
  personName: (user: number | string) => string | undefined,
): BacktestFinding {
  return {
    id: m.id,
    link: `${url.replace(/\/+$/, "")}/#narrow/id/${m.id}`,
    sender: m.sender_full_name,
    senderId: m.sender_id,
    where:
      m.stream_id !== undefined
        ? `#${channelName(m.stream_id) ?? m.stream_id} > ${m.subject}`
        : "direct message",
    rules,
    actions: calls.map((call) => ({ does: describeCall(call, channelName, personName), call })),
    ...(error !== undefined ? { error } : {}),
  };
}

/** Beyond this many people the history does not name, one `GET /users` asks for everyone at once. */
const ASK_EACH_UP_TO = 20;

/**
 * Names of people by user id and by email (lower-cased): every sender of the history and every
 * recipient of its direct messages, as the messages give them; then each of `wanted` they do not
 * name, asked of the server: one `GET /users/{id}` each, or a single `GET /users` for more than
 * {@link ASK_EACH_UP_TO}, so the requests never grow with the number of messages.
 */
async function peopleNames(
  users: Pick<UsersApi, "get" | "list">,
  history: readonly Message[],
  wanted: readonly (number | string)[],
  signal: AbortSignal | undefined,
): Promise<(user: number | string) => string | undefined> {
  const names = new Map<number | string, string>();
  const learn = (id: number, email: string | undefined, name: string) => {
    names.set(id, name);
    if (email) names.set(email.toLowerCase(), name);
  };
  for (const m of history) {
    learn(m.sender_id, m.sender_email, m.sender_full_name);
    if (Array.isArray(m.display_recipient)) {
      for (const r of m.display_recipient) learn(r.id, r.email, r.full_name);
    }
  }
  const key = (u: number | string) => (typeof u === "number" ? u : u.toLowerCase());
  const unknown = [...new Set(wanted.map(key))].filter((u) => !names.has(u));
  // A lookup that fails leaves the person shown by id or email: the report matters more than a name.
  if (unknown.length > ASK_EACH_UP_TO) {
    const { members } = await users.list({}, signal ? { signal } : {}).catch(() => ({ members: [] }));
    for (const u of members) learn(u.user_id, u.email, u.full_name);
  } else {
    for (const u of unknown) {
      if (signal?.aborted) break;
      const found = await users.get(u, {}, signal ? { signal } : {}).catch(() => undefined);
      if (found)
        learn(found.user.user_id, typeof u === "string" ? u : found.user.email, found.user.full_name);
    }
  }
  signal?.throwIfAborted();
  return (u) => names.get(key(u));
}
