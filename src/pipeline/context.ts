/**
 * The context every handler receives: the event, who the bot is, its client, state, logger,
 * settings and server limits, and ways to answer.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import type { SendMessageParams } from "../api/resources/messages.ts";
import type { ServerInfo } from "../api/server-info.ts";
import type { BotServices } from "../effects/bot-services.ts";
import { type ContextHelpers, unavailableHelpers } from "../effects/context-helpers.ts";
import { OpenProgresses } from "../effects/progress/open-progresses.ts";
import { startProgress } from "../effects/progress/start-progress.ts";
import { react } from "../effects/react.ts";
import { recordedSchedule, recordedSnippets } from "../effects/recorded-helpers.ts";
import type { ScheduleApi } from "../effects/schedule/schedule-api.ts";
import type { DeadLetterSource } from "../state/dead-letters.ts";
import type { KV, StateRun } from "../state/kv.ts";
import { type Clock, realClock } from "../time/clock.ts";
import type { AnyEvent } from "../wire/events.ts";
import { addressOf, type Sender, senderOf, sendParams, textOf, type Where, whereOf } from "./addressed.ts";
import { sendOf } from "./context-send.ts";
import type {
  BaseContext,
  BotContext,
  ContextDeps,
  ContextExtra,
  SendEffects,
  SignalSource,
} from "./context-types.ts";
import type { Dialogs } from "./dialogs/dialogs.ts";
import { promptOf } from "./dialogs/prompt-context.ts";
import { startDialogOf } from "./dialogs/started-dialog.ts";
import type { Turn } from "./dialogs/turn.ts";
import { ledgerIdOf, newerOf, onServer, runFields } from "./event-fields.ts";
import { type External, externalOf } from "./external.ts";
import { followerFor, type ReplyFollower } from "./reply-follow.ts";
import { replyTarget } from "./reply-target.ts";

export type {
  BaseContext,
  BotContext,
  ContextDeps,
  JobContext,
  SendEffects,
  SignalSource,
  WebhookContext,
} from "./context-types.ts";

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
  /** How the run came (`sourceOf`, `job`, `inbound-webhook`, `on-start`), for the dialogs it starts. */
  readonly #source: DeadLetterSource;
  #made: Made<S> | undefined;
  /** The run's effect records (a message event's or a cron job's), through which its sends go. */
  effects: SendEffects | undefined;
  bot: BaseContext<S>["bot"];
  api: Client;
  /** The run's state (made on first read), or what was assigned; undefined: the bot's. */
  #state: KV | StateRun | undefined;
  settings: S;
  server: ServerInfo;

  /** `state`: the run's staged state (else the bot's, writing at once). */
  constructor(
    deps: ContextDeps<S>,
    signal: SignalSource,
    source: DeadLetterSource,
    effects: SendEffects | undefined,
    state?: KV | StateRun,
  ) {
    this.#deps = deps;
    this.#signal = signal;
    this.#source = source;
    this.effects = effects;
    this.bot = deps.bot;
    this.api = deps.api;
    this.#state = state;
    this.settings = deps.settings;
    this.server = deps.server;
  }

  /** The members made so far (allocated on the first). */
  protected made(): Made<S> {
    this.#made ??= {};
    return this.#made;
  }

  get state(): KV {
    const state = this.#state;
    if (state === undefined) return this.#deps.state;
    if ("commit" in state) this.#state = state.state;
    return this.#state as KV;
  }
  set state(value: KV) {
    this.#state = value;
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
    const options = {
      client: this.#deps.api,
      signal: this.signal,
      limits: () => this.#deps.server,
      log: this.log,
      ...(this.#deps.clock ? { clock: this.#deps.clock } : {}),
      ...(this.#deps.services ? { lookups: this.#deps.services.lookups } : {}),
    };
    made.schedule = recordedSchedule(options, this.effects, this.bot.userId);
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
  get now(): BaseContext<S>["now"] {
    const clock = this.clock;
    return () => clock.now();
  }

  /** The daemon's clock. */
  protected get clock(): Pick<Clock, "now"> {
    return this.#deps.clock ?? realClock;
  }
  get startDialog(): BaseContext<S>["startDialog"] {
    const signal = this.messageId() === undefined ? this.signal : undefined;
    return startDialogOf(this.#deps as ContextDeps<unknown>, signal, this.effects, this.#source);
  }

  get react(): BaseContext<S>["react"] {
    const at = { eventMessageId: onServer(this.messageId()), signal: this.signal, clock: this.#deps.clock };
    return (emoji, options = {}) => react(this.api, emoji, { ...options, ...at });
  }

  /** The message `react` defaults to: an event context's message. */
  protected messageId(): number | undefined {
    return undefined;
  }

  /** `params` sent where their conversation is now: an event context follows its moved message. */
  protected followed(
    params: SendMessageParams,
    _read?: boolean,
  ): SendMessageParams | Promise<SendMessageParams> {
    return params;
  }

  #helpersOf(): ContextHelpers {
    const made = this.made();
    if (made.helpers) return made.helpers;
    const deps = this.#deps;
    const signal = this.signal;
    const effects = this.effects;
    const event = effects?.run.eventKey;
    const send = sendOf(deps, signal, effects, (params, earlier) => this.followed(params, earlier));
    const helpers = deps.services
      ? deps.services.forContext({ signal, server: deps.server, selfId: deps.bot.userId, send, event })
      : unavailableHelpers(send);
    if (effects) helpers.snippets = recordedSnippets(helpers.snippets, effects, deps.services?.snippets);
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
    source: DeadLetterSource,
    bindings: Record<string, unknown>,
    effects?: SendEffects,
    state?: KV,
  ) {
    super(deps, signal, source, effects, state);
    this.#bindings = bindings;
  }

  protected override logBindings(): Record<string, unknown> {
    return this.#bindings;
  }

  /** A cron job's or a keyed webhook request's `ctx.external` (without effect records: a plain call). */
  get external(): External {
    return externalOf(undefined, this.effects?.run);
  }
}

/** An event's context: the event, and `reply` into its conversation. */
class LazyEventContext<S> extends LazyContext<S> {
  readonly event: AnyEvent;
  readonly replayed: boolean;
  readonly channelName: (channelId: number) => string | undefined;
  readonly #services: BotServices | undefined;
  readonly #dialogs: Dialogs | undefined;
  /** The run as a turn of a dialog (a message's run), else undefined. */
  readonly #turn: Turn | undefined;
  /** The progresses the run opened (made on the first; an event's attempts share one). */
  #progresses: OpenProgresses | undefined;
  /** When the run began, and what follows its message where it moved (see reply-follow.ts). */
  readonly #began: number;
  /** Made at the first send; null for an event with no channel message to follow. */
  #follower: ReplyFollower | null | undefined;
  declare eventIssue?: string;

  /** The progresses `ctx` opened, if any: what a failed run ends. */
  static progressesOf(ctx: object): OpenProgresses | undefined {
    return ctx instanceof LazyEventContext ? ctx.#progresses : undefined;
  }

  constructor(
    deps: ContextDeps<S>,
    event: AnyEvent,
    signal: SignalSource,
    extra: ContextExtra,
    effects: SendEffects | undefined,
    state: StateRun | undefined,
    turn: Turn | undefined,
  ) {
    super(deps, signal, extra.source, effects, state);
    this.event = event;
    this.replayed = extra.replayed;
    this.channelName = deps.channelName;
    this.#services = deps.services;
    this.#dialogs = deps.dialogs;
    this.#turn = turn;
    this.#progresses = extra.progresses;
    this.#began = this.clock.now();
  }

  protected override followed(
    params: SendMessageParams,
    earlier?: boolean,
  ): SendMessageParams | Promise<SendMessageParams> {
    if (this.#turn?.record !== undefined) return params; // a dialog's replay follows the dialog's moves
    if (this.#follower === undefined) {
      const { api, server, signal, log, clock } = this;
      const deps = { api, featureLevel: server.featureLevel, now: () => clock.now(), signal, log };
      this.#follower = followerFor(this.event, this.#began, deps) ?? null;
    }
    return this.#follower?.follow(params, earlier) ?? params;
  }

  protected override logBindings(): Record<string, unknown> {
    return runFields(this.event);
  }

  protected override messageId(): number | undefined {
    return ledgerIdOf(this.event);
  }

  get text(): string {
    return textOf(this.event, this.bot);
  }
  get where(): Where | undefined {
    return whereOf(this.event, this.bot);
  }
  get sender(): Sender | undefined {
    const services = this.#services;
    return senderOf(
      this.event,
      (id) => services?.users.peek(id),
      (id, email) => !!services?.systemBots.has(id, email),
    );
  }
  get addressed(): "direct" | "mention" | undefined {
    return addressOf(this.event, this.bot) as "direct" | "mention" | undefined;
  }

  get prompt(): BotContext<S>["prompt"] {
    const [ctx, clock] = [this as unknown as Parameters<typeof promptOf>[0], this.clock];
    const channels = this.#services?.channels;
    return promptOf(ctx, this.#dialogs, this.#turn, channels, () => clock.now()) as BotContext<S>["prompt"];
  }

  override get now(): BaseContext<S>["now"] {
    const clock = this.clock;
    const turn = this.#turn;
    return turn ? () => turn.value(() => clock.now()) : () => clock.now();
  }

  get external(): BotContext<S>["external"] {
    return externalOf(this.#turn, this.effects?.run);
  }

  get random(): BotContext<S>["random"] {
    const turn = this.#turn;
    return turn ? () => turn.value(Math.random) : Math.random;
  }

  get progress(): BotContext<S>["progress"] {
    return async (text, options) => {
      const { api, clock, effects, log, server, signal, bot } = this;
      const target = replyTarget(this.event, this.eventIssue, bot.userId);
      const [run, after, selfId, askedId] = [effects?.run, effects?.after, bot.userId, this.messageId()];
      // Its first post, an effect of the handler's run, is looked for as a send is (in a dialog's
      // replay, past its latest answer).
      const newer = effects && (() => newerOf(effects));
      const deps = { api, clock, run, after, log, server, signal, selfId, askedId, target };
      const progress = await startProgress(newer ? { ...deps, newer } : deps, text, options);
      this.#progresses ??= new OpenProgresses();
      this.#progresses.add(progress);
      return progress;
    };
  }

  get reply(): BotContext<S>["reply"] {
    const made = this.made();
    made.reply ??= (content) =>
      this.send({ ...replyTarget(this.event, this.eventIssue, this.bot.userId), content });
    return made.reply;
  }
  set reply(value: BotContext<S>["reply"]) {
    this.made().reply = value;
  }
}

export function createContext<S>(
  deps: ContextDeps<S>,
  event: AnyEvent,
  signal: SignalSource,
  extra: ContextExtra,
  effects?: SendEffects,
  state?: StateRun,
  turn?: Turn,
): BotContext<S> {
  const ctx = new LazyEventContext(deps, event, signal, extra, effects, state, turn);
  if (extra.eventIssue) ctx.eventIssue = extra.eventIssue;
  return ctx as BotContext<S>;
}

/** The progresses a context's run opened (`ctx.progress`), if any. */
export const progressesOf = (ctx: object): OpenProgresses | undefined => LazyEventContext.progressesOf(ctx);
