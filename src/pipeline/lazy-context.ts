/**
 * What every handler's context has, each helper made on first use: state, signal, log, schedule,
 * send and the helpers of the bot's services, react and startDialog; and the context of a run with
 * no event (a cron job, a webhook request, an onStart handler).
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import type { SendMessageParams } from "../api/resources/messages.ts";
import type { ServerInfo } from "../api/server-info.ts";
import { type ContextHelpers, unavailableHelpers } from "../effects/context-helpers.ts";
import { react } from "../effects/react.ts";
import { recordedSchedule, recordedSnippets } from "../effects/recorded-helpers.ts";
import type { ScheduleApi } from "../effects/schedule/schedule-api.ts";
import type { DeadLetterSource } from "../state/dead-letters.ts";
import type { KV, StateRun } from "../state/kv.ts";
import { type Clock, realClock } from "../time/clock.ts";
import { sendParams } from "./addressed.ts";
import { sendOf } from "./context-send.ts";
import type { BaseContext, BotContext, ContextDeps, SendEffects, SignalSource } from "./context-types.ts";
import { startDialogOf } from "./dialogs/started-dialog.ts";
import { onServer } from "./event-fields.ts";
import { type External, externalOf } from "./external.ts";

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
export class LazyContext<S> {
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
