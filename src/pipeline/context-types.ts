/**
 * The context types every handler sees (`BaseContext`, and the event, job and webhook contexts on
 * top of it) and what a context is built from. `context.ts` builds them.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import type { SendMessageParams } from "../api/resources/messages.ts";
import type { ServerInfo } from "../api/server-info.ts";
import type { BotServices } from "../effects/bot-services.ts";
import type { ContextHelpers } from "../effects/context-helpers.ts";
import type { EffectRecord, EffectRun } from "../effects/effect-records.ts";
import type { OpenProgresses } from "../effects/progress/open-progresses.ts";
import type { ProgressHandle, ProgressOptions } from "../effects/progress/types.ts";
import type { ReactOptions } from "../effects/react.ts";
import type { ScheduleApi } from "../effects/schedule/schedule-api.ts";
import type { DeadLetterSource } from "../state/dead-letters.ts";
import type { KV } from "../state/kv.ts";
import type { JsonValue } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import type { AnyEvent } from "../wire/events.ts";
import type { Sender, SendTo, Where } from "./addressed.ts";
import type { RoutableContext } from "./composer.ts";
import type { DialogRecord } from "./dialogs/dialog-record.ts";
import type { Dialogs } from "./dialogs/dialogs.ts";
import type { PromptAnswer, PromptOptions } from "./dialogs/prompt.ts";

/** Who the bot is, as its handlers see it (`ctx.bot`). */
export interface BotSelf {
  /** Its name in the config. */
  name: string;
  userId: number;
  email: string;
  fullName?: string;
  /**
   * Its writes are captured, not made: `dry_run: true` in the config, or a backtest. The
   * runtime logs each captured write; a bot that logs what it did can say "would" instead, and
   * one that calls something outside `ctx` (a ticket system) can leave it alone.
   */
  dryRun: boolean;
}

/** What every context has, whether it handles an event, a cron job or an inbound webhook. */
export interface BaseContext<S = unknown> {
  /** The bot: its name in the config, its user id and email, its full name once known, and whether it runs dry. */
  bot: BotSelf;
  /** The typed client, authenticated as this bot. */
  api: Client;
  /**
   * The bot's own key-value store (persistent, namespaced per bot). In a handler its writes are
   * applied once per event, when a run succeeds; `state.immediate` writes at once.
   */
  state: KV;
  /** A pino child logger bound to the bot (and the event, job or request). */
  log: Logger;
  /** The bot's settings, validated by its schema. */
  settings: S;
  /** The server's feature level, limits and typing timings. */
  server: ServerInfo;
  /** Messages the server sends later for the bot: `schedule.at({ to, topic, content, at })`, list, cancel, reschedule. */
  schedule: ScheduleApi;
  /** Aborted when the handler times out, or when a shutdown's deadline (`shutdown_timeout`) passes. */
  signal: AbortSignal;
  /**
   * The time (epoch ms) on the daemon's clock. Read it instead of `Date.now()`: a test that moves
   * the clock (the testing kit's `clock.advance`) moves it for the bot too. In a dialog's handler
   * a replay reads the value the first run read.
   */
  now(): number;
  /**
   * Send any message as this bot. Content over the server's `max_message_length` is split at
   * paragraph breaks and sent as several messages (id of the first is returned), or refused
   * (`CONTENT_TOO_LONG`) under `long_messages: reject`; a topic over `max_topic_length` is
   * refused (`TOPIC_TOO_LONG`), never truncated.
   */
  send(params: SendMessageParams | SendTo): Promise<{ id: number }>;
  /** The bot's saved snippets, cached (`bot.track("snippets")` keeps them fresh from events). */
  snippets: ContextHelpers["snippets"];
  /** Users by id or email, cached (`bot.track("users")` keeps them fresh from events). */
  users: ContextHelpers["users"];
  /** User groups and their members, cached (kept current with `bot.track("groups")`, or when a command checks groups). */
  groups: ContextHelpers["groups"];
  /** Show typing while work runs; see who is typing (needs `bot.track("typing")`). */
  typing: ContextHelpers["typing"];
  /** Report a message to the moderators, at most once ever per message. */
  report: ContextHelpers["report"];
  /**
   * React with an emoji, by name (`"eyes"`), to the event's message or `options.messageId`;
   * `remove: true` takes the reaction off. Already there (or already gone) counts as done.
   */
  react(emoji: string, options?: ReactOptions): Promise<void>;
  /**
   * Start a dialog with a person who did not write first: in a direct message with `userId`, the
   * bot's handlers run on the message `text` as if they had sent it (`"standup"` runs the
   * `standup` command), and its `ctx.prompt`s ask them. The dialog is durable from the call on.
   * Once per job occurrence (or event) for the same person and text: resolves false when that
   * dialog was started already, or when another dialog with the person is under way there. A
   * run again after a failure gets what each start resolved the first time.
   */
  startDialog(userId: number, text: string): Promise<boolean>;
}

/** The context of an event's handler: the event, `reply`, `send` and every helper. */
export interface BotContext<S = unknown> extends BaseContext<S>, RoutableContext {
  event: AnyEvent;
  bot: BotSelf;
  log: Logger;
  signal: AbortSignal;
  /** True for messages fetched after a new queue (missed while no queue listened). */
  replayed: boolean;
  /** Answer in the event's conversation (same channel and topic, or the same direct message group). */
  reply(content: string): Promise<{ id: number }>;
  /**
   * Post `text` in the event's conversation and return a handle that shows long work in it:
   * `update`/`append`/`stream` edit the message (at most once a second, less often when the call
   * budget runs low), `done`/`fail` finish it. See docs/guide/approvals-buttons-progress.md.
   */
  progress(text: string, options?: ProgressOptions): Promise<ProgressHandle>;
  /** A message's content without the bot's own mention (other mentions kept), trimmed; `""` for other events. */
  readonly text: string;
  /** Where a message was said: `{ channel, channelId, topic }` or `{ direct: userIds }`; `undefined` for other events. */
  readonly where: Where | undefined;
  /** Who sent a message (id, name, email, role, isBot), from the message and the users cache; no request. */
  readonly sender: Sender | undefined;
  /** Why a message is addressed to the bot: a one-to-one `"direct"` message or a `"mention"`; else `undefined`. */
  readonly addressed: "direct" | "mention" | undefined;
  /**
   * The command the message ran (its name, and the word the sender used), once the bot's commands
   * have seen it: a handler declared before them reads it after `await next()`; `undefined` for
   * a message that ran none.
   */
  command?: { name: string; invokedAs: string } | undefined;
  /**
   * Say `text` in the message's conversation and wait for the sender's next message there (in a
   * channel: theirs, in that topic). The dialog is durable: waiting holds no handler, slot or
   * `handler_timeout`, and survives restarts, reloads and failover. The answer runs the handler
   * again from the start, each earlier effect and answer replayed from the dialog's record (see
   * docs/guide/conversations.md). With `schema`, the answer is parsed (a refused one is asked
   * again, up to `tries`). Rejects with a `PromptError`: `PROMPT_TIMEOUT` after `timeout`
   * (default 1 h), `PROMPT_DELETED` when the question's message is deleted, `PROMPT_CANCELLED` on
   * the cancel word, `PROMPT_INVALID` when every try was refused.
   */
  prompt<const C extends string>(
    text: string,
    options: PromptOptions<C> & { choices: readonly C[] | Readonly<Record<C, string>> },
  ): Promise<PromptAnswer<C>>;
  prompt<T = string>(text: string, options?: PromptOptions<T>): Promise<PromptAnswer<T>>;
  /**
   * Call something outside `ctx` (a `fetch`, a database query) once for the event: `fn`'s result
   * (JSON) is recorded and handed back when the handler runs again for it (a retry, a restart
   * after a crash, a dialog's replay) instead of calling again. Names must be in the same order
   * on each run.
   *
   * @example
   * ```ts
   * const issue = await ctx.external("create-issue", () => tracker.create(title));
   * ```
   */
  external<T extends JsonValue>(name: string, fn: () => Promise<T> | T): Promise<T>;
  /**
   * A random number in [0, 1), like `Math.random()`, but recorded in a dialog: a replay of the
   * dialog reads the same number (so does `ctx.now()`).
   */
  random(): number;
}

/** The context of a `bot.cron()` job. */
export interface JobContext<S = unknown> extends BaseContext<S> {
  /** `catchUp`: the one run after downtime of a `missed: "run-once"` job. */
  job: { id: string; expression: string; scheduledFor: Date; firedAt: Date; catchUp: boolean };
  /**
   * Call something outside `ctx` (a `fetch`, a database query) once for the job's occurrence:
   * `fn`'s result (JSON) is recorded and committed before it is handed back, and a run again of
   * the occurrence (a retry, a dead letter's replay, a restart after a crash) gets it without
   * calling. A crash while `fn` is under way calls it again. Names must be in the same order on
   * each run.
   *
   * @example
   * ```ts
   * const report = await ctx.external("weekly report", () => reports.create(ctx.job.scheduledFor));
   * ```
   */
  external<T extends JsonValue>(name: string, fn: () => Promise<T> | T): Promise<T>;
}

/** The context of a `bot.webhook()` request. */
export interface WebhookContext<S = unknown> extends BaseContext<S> {
  request: {
    /** Parsed body: JSON, or an object of form fields. */
    body: unknown;
    rawBody: Buffer;
    headers: Readonly<Record<string, string | string[] | undefined>>;
    query: Readonly<Record<string, string>>;
    /** The idempotency key, when the webhook declares where to find it (`idempotencyHeader`, `idempotencyKey`). */
    idempotencyKey: string | undefined;
  };
  /**
   * `fn`'s result (JSON), called once per request key (`idempotencyHeader`'s value, what
   * `idempotencyKey` read, or a timestamped signature): recorded and committed before it is
   * handed back, so the sender's retry of a request that failed or whose process died gets it
   * without calling. A request with no key is a new one each time: `fn` is called. Names must be
   * in the same order on each run.
   */
  external<T extends JsonValue>(name: string, fn: () => Promise<T> | T): Promise<T>;
}

export interface ContextDeps<S>
  extends Pick<BaseContext<S>, "bot" | "api" | "state" | "log" | "settings" | "server"> {
  channelName(channelId: number): string | undefined;
  /** What "now" is for `ctx.schedule` (tests pass a fake clock); default the real clock. */
  clock?: Pick<Clock, "now">;
  /** The bot's shared helpers; without them `ctx.snippets` etc. throw HELPERS_UNAVAILABLE. */
  services?: BotServices;
  /** Where `ctx.prompt()` keeps its dialogs; without it, prompts are unavailable. */
  dialogs?: Dialogs;
}

/**
 * A run's effect records, and what a send found by read-back must be newer than: the event's
 * message id, or (a cron job's run) the time it fired, in epoch seconds.
 */
export interface SendEffects {
  run: EffectRun;
  after: number | undefined;
  since?: number;
  /** A dialog's replay: the effects it makes anew, and the message they all come after. */
  fresh?: { from: number; after: number };
  /** Where the conversations of the dialog the run replays moved: its sends follow them. */
  moves?: DialogRecord["moves"];
  /** The effect records of the dialog's rewound turns (see {@link DialogRecord.rewound}). */
  rewound?: readonly EffectRecord[];
}

/** Where a context's signal comes from: a signal, or an object that makes one on first read (a queue task's control). */
export type SignalSource = AbortSignal | { readonly signal: AbortSignal };

/** An event context's run: `source`, how it came (`startedBy`); `progresses`, an earlier attempt's. */
export interface ContextExtra {
  readonly replayed: boolean;
  readonly source: DeadLetterSource;
  readonly eventIssue?: string;
  readonly progresses?: OpenProgresses;
}
