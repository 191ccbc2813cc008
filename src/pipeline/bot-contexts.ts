/**
 * What every context of one bot is built from: the parts fixed when the bot is wired, and the
 * server's limits and the bot's user, known once a registration answered ({@link identify}).
 * Every kind of handler (events, `bot.onStart()`, cron jobs, inbound webhooks) gets its context
 * from here.
 */
import type { Logger } from "pino";
import { callLaneOf } from "../api/budget-line.ts";
import { backgroundClientOf } from "../api/client-lane.ts";
import type { Client } from "../api/create-client.ts";
import type { ServerInfo } from "../api/server-info.ts";
import type { BotServices } from "../effects/bot-services.ts";
import type { EffectRecords } from "../effects/effect-records.ts";
import type { OpenProgresses } from "../effects/progress/open-progresses.ts";
import type { StateRun } from "../state/kv.ts";
import { KV } from "../state/kv.ts";
import type { Clock } from "../time/clock.ts";
import {
  type BotContext,
  type ContextDeps,
  createContext,
  LazyBaseContext,
  type SendEffects,
  type SignalSource,
} from "./context.ts";
import { webhookReplyOf } from "./context-send.ts";
import type { Dialogs } from "./dialogs/dialogs.ts";
import type { Turn } from "./dialogs/turn.ts";
import { type BotIdentity, contextExtraOf, type Incoming, type RunHandler } from "./incoming.ts";
import { quietWhileReplaying } from "./run-log.ts";

export interface BotContextsOptions {
  name: string;
  client: Client;
  state: KV;
  log: Logger;
  settings: unknown;
  /** ctx.snippets, ctx.users, ctx.typing, ctx.report and the limits of ctx.send. */
  services: BotServices;
  /** What "now" is for `ctx.schedule`. */
  clock: Clock;
  /** The bot's dialogs (`ctx.prompt`). */
  dialogs: Dialogs;
  /** Its writes are captured, not made (`ctx.bot.dryRun`). */
  dryRun: boolean;
  /** The bot's effect records (a progress a dialog's run left open is ended with them). */
  effects?: EffectRecords | undefined;
}

/** What a registration tells about the bot and its server. */
interface Registration {
  readonly server: ServerInfo;
  readonly self: BotIdentity;
}

export class BotContexts {
  readonly #o: BotContextsOptions;
  #registration: Registration | undefined;
  /** Made once per registration, not per event; and those of a dead letter's replay. */
  #deps: ContextDeps<unknown> | undefined;
  #backgroundDeps: ContextDeps<unknown> | undefined;

  constructor(options: BotContextsOptions) {
    this.#o = options;
  }

  /** The clock every context reads. */
  get clock(): Clock {
    return this.#o.clock;
  }

  /** The bot's user and the server's limits, from a registration. */
  identify(server: ServerInfo, self: BotIdentity): void {
    this.#registration = { server, self };
    this.#deps = undefined;
    this.#backgroundDeps = undefined;
  }

  /**
   * The server restarted on the same queue, with this version and feature level (an upgrade, or
   * a downgrade): the contexts made from now on say so, as a new registration would.
   */
  restarted(version: string | undefined, featureLevel: number): void {
    const registration = this.#registration;
    if (registration === undefined) return;
    const server = { ...registration.server, featureLevel, ...(version === undefined ? {} : { version }) };
    this.identify(server, registration.self);
  }

  /** The server's limits, once a registration answered. */
  get server(): ServerInfo | undefined {
    return this.#registration?.server;
  }

  /** The bot's client, usable before a registration (an ended dialog's note is said at a start). */
  get client(): Client {
    return this.#o.client;
  }

  /** The bot's effect records, when it keeps them. */
  get effects(): EffectRecords | undefined {
    return this.#o.effects;
  }

  /** The bot's user, once a registration answered. */
  get self(): BotIdentity | undefined {
    return this.#registration?.self;
  }

  /** What a context of this bot is built from. Throws before the first registration. */
  deps(): ContextDeps<unknown> {
    this.#deps ??= this.#makeDeps();
    return this.#deps;
  }

  /** {@link deps} with the bot's client in the background lane. */
  #inBackground(): ContextDeps<unknown> {
    this.#backgroundDeps ??= { ...this.deps(), api: backgroundClientOf(this.#o.client) };
    return this.#backgroundDeps;
  }

  /** Apart from {@link deps}, read per event: its closure's scope would be made at every call. */
  #makeDeps(): ContextDeps<unknown> {
    const o = this.#o;
    const registration = this.#registration;
    if (!registration) throw new Error(`bot ${o.name} has not registered with its server yet`);
    return {
      bot: {
        name: o.name,
        userId: registration.self.userId,
        email: registration.self.email,
        ...(registration.self.fullName !== undefined ? { fullName: registration.self.fullName } : {}),
        dryRun: o.dryRun,
      },
      api: o.client,
      state: o.state,
      log: o.log,
      settings: o.settings,
      server: registration.server,
      channelName: (id) => o.services.channels.nameOf(id),
      clock: o.clock,
      services: o.services,
      dialogs: o.dialogs,
    };
  }

  /**
   * The context of a run of `incoming`'s handlers: its signal's source, its effects and staged
   * state, its turn of a dialog (a message's run), and an earlier attempt's progresses.
   */
  forRun(
    incoming: Incoming,
    signal: SignalSource,
    replayed: boolean,
    effects: SendEffects | undefined,
    state: StateRun,
    turn: Turn | undefined,
    progresses?: OpenProgresses,
  ): BotContext<unknown> {
    // How the run came: a dialog it starts keeps it for its first run's dead letter.
    const extra = contextExtraOf(incoming, replayed, progresses);
    // A dead letter's replay answers no one waiting: every call made through its context (ctx.api
    // with or without ctx.signal, its sends and helpers) gives way to live ones, unless it names
    // its lane. Not every run `replayed`: a dialog run on its person's answer, a caught-up
    // message, a run a stop cut answer someone.
    const background = incoming.letter !== undefined;
    const deps = background ? this.#inBackground() : this.deps();
    const source = background ? backgroundSource(signal) : signal;
    const ctx = createContext(deps, incoming.event, source, extra, effects, state, turn);
    if (turn?.replaying) quietWhileReplaying(ctx, turn);
    const reply = incoming.reply;
    // An outgoing webhook's reply is an effect like any send: a run again makes it no more.
    if (reply) ctx.reply = effects ? webhookReplyOf(deps, ctx, effects, reply) : reply;
    return ctx;
  }

  /** The bot's state (each handler run gets a staged view of it: `KV.run`). */
  get state(): KV {
    return this.#o.state;
  }

  /** Stage 4 for a handler that is not an event's (see {@link RunHandler}). */
  readonly runHandler: RunHandler = (signal, source, bindings, extend, handler, effects, staged, letter) => {
    // A letter's replay gives way to live calls, as in forRun.
    const deps = letter ? this.#inBackground() : this.deps();
    const from = letter ? backgroundSource(signal) : signal;
    const run = (state?: KV) =>
      handler(extend(new LazyBaseContext(deps, from, source, bindings, effects, state)));
    // Staged: the run's state writes are applied once it succeeded, before its result goes on.
    return staged === undefined ? run() : KV.within(this.#o.state, staged.once, run, staged.keptMs);
  };
}

/** `source`, its signal (taken when first asked for) given the background lane for the budget. */
function backgroundSource(source: SignalSource): SignalSource {
  if (source instanceof AbortSignal) return callLaneOf(source, "background");
  return {
    get signal() {
      return callLaneOf(source.signal, "background");
    },
  };
}
