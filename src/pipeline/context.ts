/**
 * The context every handler receives: the event, who the bot is, its client, state, logger,
 * settings and server limits, and ways to answer.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import type { SendMessageParams } from "../api/resources/messages.ts";
import type { ServerInfo } from "../api/server-info.ts";
import { type BotServices, type ContextHelpers, unavailableHelpers } from "../effects/bot-services.ts";
import type { EffectRun } from "../effects/effect-records.ts";
import { ECHO_WAIT_MS, isAmbiguous } from "../effects/local-echo.ts";
import { type ReactOptions, react } from "../effects/react.ts";
import { recordedSchedule, recordedSnippets } from "../effects/recorded-helpers.ts";
import { createScheduleApi, type ScheduleApi } from "../effects/schedule/schedule-api.ts";
import { findSent } from "../effects/verify-send.ts";
import type { KV } from "../state/kv.ts";
import type { Clock } from "../time/clock.ts";
import type { ServerEvent } from "../wire/events.ts";
import {
  addressOf,
  type Sender,
  type SendTo,
  senderOf,
  sendParams,
  textOf,
  type Where,
  whereOf,
} from "./addressed.ts";
import type { RoutableContext } from "./composer.ts";
import { type PendingPrompts, type PromptAnswer, prompt } from "./prompts.ts";
import { replyTarget } from "./reply-target.ts";

/** What every context has, whether it handles an event, a cron job or an inbound webhook. */
export interface BaseContext<S = unknown> {
  /** The bot: its name in the config, its user id and email, and its full name once known. */
  bot: { name: string; userId: number; email: string; fullName?: string };
  /** The typed client, authenticated as this bot. */
  api: Client;
  /** The bot's own key-value store (persistent, namespaced per bot). */
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
  /** User groups and their members, cached (kept current when a command checks groups). */
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
}

/** The context of an event's handler: the event, `reply`, `send` and every helper. */
export interface BotContext<S = unknown> extends BaseContext<S>, RoutableContext {
  event: ServerEvent;
  bot: { name: string; userId: number; email: string; fullName?: string };
  log: Logger;
  signal: AbortSignal;
  /** True for messages fetched after a new queue (missed while no queue listened). */
  replayed: boolean;
  /** Answer in the event's conversation (same channel and topic, or the same direct message group). */
  reply(content: string): Promise<{ id: number }>;
  /** A message's content without the bot's own mention (other mentions kept), trimmed; `""` for other events. */
  readonly text: string;
  /** Where a message was said: `{ channel, channelId, topic }` or `{ direct: userIds }`; `undefined` for other events. */
  readonly where: Where | undefined;
  /** Who sent a message (id, name, email, role, isBot), from the message and the users cache; no request. */
  readonly sender: Sender | undefined;
  /** Why a message is addressed to the bot: a one-to-one `"direct"` message or a `"mention"`; else `undefined`. */
  readonly addressed: "direct" | "mention" | undefined;
  /**
   * Say `text` in the message's conversation and wait for the sender's next message there; rejects
   * with `PROMPT_TIMEOUT` after `timeout` ms (default 25 s, and at the latest when the handler
   * times out). The waiting handler lives in this process: it survives neither a restart nor a failover.
   */
  prompt(text: string, options?: { timeout?: number }): Promise<PromptAnswer>;
}

/** The context of a `bot.cron()` job. */
export interface JobContext<S = unknown> extends BaseContext<S> {
  /** `catchUp`: the one run after downtime of a `missed: "run-once"` job. */
  job: { id: string; expression: string; scheduledFor: Date; firedAt: Date; catchUp: boolean };
}

/** The context of a `bot.webhook()` request. */
export interface WebhookContext<S = unknown> extends BaseContext<S> {
  request: {
    /** Parsed body: JSON, or an object of form fields. */
    body: unknown;
    rawBody: Buffer;
    headers: Readonly<Record<string, string | string[] | undefined>>;
    query: Readonly<Record<string, string>>;
    /** The idempotency key, when the webhook declares where to find it. */
    idempotencyKey: string | undefined;
  };
}

export interface ContextDeps<S>
  extends Pick<BaseContext<S>, "bot" | "api" | "state" | "log" | "settings" | "server"> {
  channelName(streamId: number): string | undefined;
  /** What "now" is for `ctx.schedule` (tests pass a fake clock); default the real clock. */
  clock?: Pick<Clock, "now">;
  /** The bot's shared helpers; without them `ctx.snippets` etc. throw HELPERS_UNAVAILABLE. */
  services?: BotServices;
  /** Where `ctx.prompt()` waits; without it, prompts are unavailable. */
  prompts?: PendingPrompts;
}

/**
 * A run's effect records, and what a send found by read-back must be newer than: the event's
 * message id, or (a cron job's run) the time it fired, in epoch seconds.
 */
export interface SendEffects {
  run: EffectRun;
  after: number | undefined;
  since?: number;
}

/** Where a context's signal comes from: a signal, or an object that makes one on first read (a queue task's control). */
export type SignalSource = AbortSignal | { readonly signal: AbortSignal };

/** What a context makes on first use, or what middleware put in place of a member. */
interface Made<S> {
  log?: Logger;
  schedule?: ScheduleApi;
  helpers?: ContextHelpers;
  send?: BaseContext<S>["send"];
  reply?: BotContext<S>["reply"];
}

/**
 * A context whose helpers are made on first use: most handlers touch one or two of them, and
 * building every helper (a pino child, the schedule API, the typing helper, the limits-aware
 * sender) for every event would cost more than the rest of its dispatch. Each helper is a getter
 * that builds and keeps its value, with a setter so middleware can replace it (`ctx.reply = …`);
 * functions come back bound, so `const { reply } = ctx` works. Extend a context by assigning to
 * it, not by spreading it: a spread copies only own fields.
 */
class LazyContext<S> {
  readonly #deps: ContextDeps<S>;
  #signal: SignalSource;
  #made: Made<S> | undefined;
  /** The run's effect records (a message event's or a cron job's), through which its sends go. */
  effects: SendEffects | undefined;
  bot: BaseContext<S>["bot"];
  api: Client;
  state: KV;
  settings: S;
  server: ServerInfo;

  constructor(deps: ContextDeps<S>, signal: SignalSource, effects: SendEffects | undefined) {
    this.#deps = deps;
    this.#signal = signal;
    this.effects = effects;
    this.bot = deps.bot;
    this.api = deps.api;
    this.state = deps.state;
    this.settings = deps.settings;
    this.server = deps.server;
  }

  /** The members made so far (allocated on the first). */
  protected made(): Made<S> {
    this.#made ??= {};
    return this.#made;
  }

  get signal(): AbortSignal {
    if (!(this.#signal instanceof AbortSignal)) this.#signal = this.#signal.signal;
    return this.#signal;
  }
  set signal(value: AbortSignal) {
    this.#signal = value;
  }

  /** What the context's child logger is bound to. */
  protected logBindings(): Record<string, unknown> {
    return {};
  }

  get log(): Logger {
    const made = this.made();
    made.log ??= this.#deps.log.child(this.logBindings());
    return made.log;
  }
  set log(value: Logger) {
    this.made().log = value;
  }

  get schedule(): ScheduleApi {
    const made = this.made();
    if (made.schedule) return made.schedule;
    const schedule = createScheduleApi({
      client: this.#deps.api,
      signal: this.signal,
      limits: () => this.#deps.server,
      ...(this.#deps.clock ? { clock: this.#deps.clock } : {}),
    });
    made.schedule = this.effects ? recordedSchedule(schedule, this.effects.run) : schedule;
    return made.schedule;
  }
  set schedule(value: ScheduleApi) {
    this.made().schedule = value;
  }

  get send(): BaseContext<S>["send"] {
    const made = this.made();
    made.send ??= (params) => this.#helpersOf().send("type" in params ? params : sendParams(params));
    return made.send;
  }
  set send(value: BaseContext<S>["send"]) {
    this.made().send = value;
  }

  get snippets(): ContextHelpers["snippets"] {
    return this.#helpersOf().snippets;
  }
  get users(): ContextHelpers["users"] {
    return this.#helpersOf().users;
  }
  get groups(): ContextHelpers["groups"] {
    return this.#helpersOf().groups;
  }
  get typing(): ContextHelpers["typing"] {
    return this.#helpersOf().typing;
  }
  get report(): ContextHelpers["report"] {
    return this.#helpersOf().report;
  }
  get react(): BaseContext<S>["react"] {
    return (emoji, options = {}) =>
      react(this.api, emoji, { ...options, eventMessageId: this.messageId(), signal: this.signal });
  }

  /** The message `react` defaults to: an event context's message. */
  protected messageId(): number | undefined {
    return undefined;
  }

  #helpersOf(): ContextHelpers {
    const made = this.made();
    if (made.helpers) return made.helpers;
    const deps = this.#deps;
    const signal = this.signal;
    const echo = deps.services?.echo;
    const post = async (params: SendMessageParams) => {
      // With a local id the send's own message event can prove it stored if the answer is lost.
      const tag = echo?.tag();
      try {
        const { id } = await deps.api.messages.send({ read_by_sender: true, ...params, ...tag }, { signal });
        return { id };
      } catch (err) {
        const id = tag && isAmbiguous(err) ? await echo!.wait(tag.local_id, ECHO_WAIT_MS, signal) : undefined;
        if (id === undefined) throw err;
        deps.services!.echoed(id, err);
        return { id };
      } finally {
        if (tag) echo!.done(tag.local_id);
      }
    };
    const effects = this.effects;
    // Each message posted (and each booking, each snippet created) is an effect: made once per
    // event, however often the handler runs.
    const send = effects
      ? (params: SendMessageParams) =>
          effects.run.once("send", {
            act: () => post(params),
            verify: () => findSent(deps.api, deps.bot.userId, params, effects, signal),
          })
      : post;
    const helpers = deps.services
      ? deps.services.forContext({ signal, server: deps.server, selfId: deps.bot.userId, send })
      : unavailableHelpers(send);
    if (effects) helpers.snippets = recordedSnippets(helpers.snippets, effects.run, effects.since);
    made.helpers = helpers;
    return helpers;
  }
}

/** A cron, webhook or start context: the parts every kind of context shares, its log bound to `bindings`. */
export class LazyBaseContext<S> extends LazyContext<S> {
  readonly #bindings: Record<string, unknown>;

  constructor(
    deps: ContextDeps<S>,
    signal: SignalSource,
    bindings: Record<string, unknown>,
    effects?: SendEffects,
  ) {
    super(deps, signal, effects);
    this.#bindings = bindings;
  }

  protected override logBindings(): Record<string, unknown> {
    return this.#bindings;
  }
}

/** An event's context: the event, and `reply` into its conversation. */
class LazyEventContext<S> extends LazyContext<S> {
  readonly event: ServerEvent;
  readonly replayed: boolean;
  readonly channelName: (streamId: number) => string | undefined;
  readonly #services: BotServices | undefined;
  readonly #prompts: PendingPrompts | undefined;
  declare eventIssue?: string;

  constructor(
    deps: ContextDeps<S>,
    event: ServerEvent,
    signal: SignalSource,
    replayed: boolean,
    effects: SendEffects | undefined,
  ) {
    super(deps, signal, effects);
    this.event = event;
    this.replayed = replayed;
    this.channelName = deps.channelName;
    this.#services = deps.services;
    this.#prompts = deps.prompts;
  }

  protected override logBindings(): Record<string, unknown> {
    const { id: eventId, type: eventType } = this.event;
    const messageId = this.messageId();
    return messageId ? { eventId, eventType, messageId } : { eventId, eventType };
  }

  protected override messageId(): number | undefined {
    return this.event.type === "message" ? (this.event as { message: { id: number } }).message.id : undefined;
  }

  get text(): string {
    return textOf(this.event, this.bot);
  }
  get where(): Where | undefined {
    return whereOf(this.event, this.bot);
  }
  get sender(): Sender | undefined {
    const users = this.#services?.users;
    return senderOf(this.event, (id) => users?.peek(id));
  }
  get addressed(): "direct" | "mention" | undefined {
    return addressOf(this.event, this.bot) as "direct" | "mention" | undefined;
  }

  get prompt(): BotContext<S>["prompt"] {
    return (text, options) => prompt(this.#prompts, this, text, options);
  }

  get reply(): BotContext<S>["reply"] {
    const made = this.made();
    made.reply ??= (content) => this.send({ ...replyTarget(this.event, this.bot.userId), content });
    return made.reply;
  }
  set reply(value: BotContext<S>["reply"]) {
    this.made().reply = value;
  }
}

export function createContext<S>(
  deps: ContextDeps<S>,
  event: ServerEvent,
  signal: SignalSource,
  extra: { replayed: boolean; eventIssue?: string },
  effects?: SendEffects,
): BotContext<S> {
  const ctx = new LazyEventContext(deps, event, signal, extra.replayed, effects);
  if (extra.eventIssue) ctx.eventIssue = extra.eventIssue;
  return ctx as BotContext<S>;
}
