/**
 * The context of an event's run: the event, who sent it and where, `reply` into its conversation
 * (following its message where it moved), and what a dialog's turn or a progress needs of it.
 */
import type { SendMessageParams } from "../api/resources/messages.ts";
import type { BotServices } from "../effects/bot-services.ts";
import { OpenProgresses } from "../effects/progress/open-progresses.ts";
import { startProgress } from "../effects/progress/start-progress.ts";
import type { StateRun } from "../state/kv.ts";
import type { AnyEvent } from "../wire/events.ts";
import { addressOf, type Sender, senderOf, textOf, type Where, whereOf } from "./addressed.ts";
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
import type { Turn } from "./dialogs/turn.ts";
import { ledgerIdOf, newerOf, runFields } from "./event-fields.ts";
import { externalOf } from "./external.ts";
import { LazyContext } from "./lazy-context.ts";
import { followerFor, type ReplyFollower } from "./reply-follow.ts";
import { replyTarget } from "./reply-target.ts";

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
