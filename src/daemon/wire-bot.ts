/**
 * The one place a bot's parts are built (its composition root). Each part gets the settings and
 * collaborators it uses, by name; no options bag travels down. Settings arrive complete: their
 * defaults are the config schema's (config/schema.ts), so no layer below has one of its own.
 * Every part reads and waits on the same clock.
 *
 * What exists from the start: the bot's state, helpers, contexts, failure handling and
 * scheduler. What needs the module's `setup` (the dispatcher, built around its composer) or a
 * start (a source, bound to that start's signal) is made by the functions returned here. What
 * a bot is built from is bot-runtime-options.ts's.
 */
import { BotServices } from "../effects/bot-services.ts";
import {
  EFFECT_RECORDS_MARGIN_MS,
  EFFECT_RECORDS_MIN_TTL_MS,
  EffectRecords,
} from "../effects/effect-records.ts";
import { DeadLetterSource } from "../events/dead-letter-source.ts";
import { QueueSource, type QueueStart } from "../events/queue-source.ts";
import { BotContexts } from "../pipeline/bot-contexts.ts";
import type { Composer } from "../pipeline/composer.ts";
import type { BotContext } from "../pipeline/context.ts";
import { ConversationQueue } from "../pipeline/conversation-queue.ts";
import { waitsAtMessages } from "../pipeline/dialogs/dialog-deletions.ts";
import { waitsInChannels } from "../pipeline/dialogs/dialog-moves.ts";
import { Dialogs } from "../pipeline/dialogs/dialogs.ts";
import { Dispatcher } from "../pipeline/dispatcher.ts";
import type { DispatcherParts } from "../pipeline/dispatcher-parts.ts";
import { HandlerFailures, jobRunner } from "../pipeline/handler-failures.ts";
import type { RunJob } from "../pipeline/incoming.ts";
import type { LetterTurns } from "../pipeline/replay-turns.ts";
import { StoreHealth } from "../pipeline/store-health.ts";
import { BotScheduler } from "../scheduler/bot-scheduler.ts";
import type { DeadLetter } from "../state/dead-letters.ts";
import { KV } from "../state/kv.ts";
import { MemoryStore } from "../state/memory-store.ts";
import { CacheSnapshot, type SnapshotTypes } from "../webhook/cache-snapshot.ts";
import { startWebhookMode } from "../webhook/webhook-mode.ts";
import type { RegisterResponse } from "../wire/responses.ts";
import type { BotRuntimeOptions } from "./bot-runtime-options.ts";
import { dialogMembers } from "./dialog-members.ts";
import { strandedDialogs } from "./stranded-dialogs.ts";

/**
 * How long a bot's effect records and applied markers are kept. A message left unmarked by a
 * crash runs again at a start while younger than `replay.max_age`: its records must still be
 * there then (they are written at or after its server timestamp, so max_age from their write is
 * enough, with a margin for the server's clock, by which a message's age is told, being ahead).
 * Without catch-up (`max_messages: 0`, webhook mode) no message runs again after a start: the
 * floor alone. A cron occurrence keeps its own until the job's next one (local-jobs.ts), an
 * inbound webhook's keyed request for the webhook's idempotency window.
 */
export function effectRecordsTtlMs(o: Pick<BotRuntimeOptions, "mode" | "replay">): number {
  const catchesUp = (o.mode ?? "queue") === "queue" && o.replay.maxMessages > 0;
  if (!catchesUp) return EFFECT_RECORDS_MIN_TTL_MS;
  return Math.max(EFFECT_RECORDS_MIN_TTL_MS, o.replay.maxAgeMs + EFFECT_RECORDS_MARGIN_MS);
}

export { warnUnreachable } from "./warn-unreachable.ts";

/** One bot's parts, and the makers of those that come later. */
export interface BotParts {
  kv: KV;
  /** Records of the sends of each handler run, by its event's key (none in a dry run's capture). */
  effects: EffectRecords;
  services: BotServices;
  contexts: BotContexts;
  scheduler: BotScheduler;
  /** Whether the state store takes the bot's writes (`/readyz`, the status, `/metrics`). */
  storeHealth: StoreHealth;
  /** The bot's pipeline, around the handlers its `setup` declared. */
  dispatcher(composer: Composer<BotContext<unknown>>, commands?: DispatcherParts["commands"]): Dispatcher;
  /** The bot starts (again) here: an effect a run began before is not waited on (see EffectRecords). */
  began(): void;
  /** The event queue as the pipeline's source, for one start. */
  queueSource(dispatcher: Dispatcher, start: QueueStart): QueueSource;
  /** An outgoing-webhook (or backtest) bot's start: learn its identity (from `registered`, if this start made one). */
  webhookMode(signal: AbortSignal, registered?: RegisterResponse, types?: SnapshotTypes): Promise<boolean>;
  /** Before an outgoing-webhook delivery: the bot's caches read again when too old (cache-snapshot.ts). */
  fresh(): Promise<void> | undefined;
  /** The waiting dialogs the bot's narrow keeps answers from: warned of at a start, marked in lists. */
  stranded: ReturnType<typeof strandedDialogs>;
  /** The replays of dead letters an operator marked, for one start; none without a store. */
  deadLetterSource(
    dispatcher: Dispatcher,
    signal: AbortSignal,
    replayJob: (letter: DeadLetter, turns: LetterTurns) => Promise<boolean>,
  ): DeadLetterSource | undefined;
}

export function wireBot(o: BotRuntimeOptions, receives: (type: string) => boolean): BotParts {
  const { name, client, log, clock, metrics, letters } = o;
  const commit = o.commit ?? o.flush;
  const store = o.store.namespace(name);
  const storeHealth = new StoreHealth(log, clock);
  const recordsTtlMs = effectRecordsTtlMs(o);
  // A handler run's ctx.state writes are marked applied for as long as its sends' records live.
  // Its writes at once (`bot.state`, `ctx.state.immediate`) are committed before they resolve.
  const applied = { store: store.namespace("applied"), ttlMs: recordsTtlMs };
  const kv = new KV(store.namespace("kv"), applied, commit);
  const services = new BotServices({
    name,
    client,
    store: o.captured ? new MemoryStore() : o.store,
    log,
    receives,
    longMessages: o.longMessages,
    clock,
    ...(metrics ? { onEcho: () => metrics.sendVerified("echo") } : {}),
    ...(o.captured || !commit ? {} : { commit }),
  });
  if (o.captured) o.captured.channelName = (id) => services.channels.nameOf(id);
  let startedAt = clock.now();
  const effects = new EffectRecords(store.namespace("effects"), {
    ttlMs: recordsTtlMs,
    log,
    commit,
    clock,
    since: () => startedAt,
    ...(metrics ? { onVerify: (outcome) => metrics.sendVerified(outcome) } : {}),
  });
  // The queue source of the bot's current start: a question with emoji choices asks it for reactions.
  let source: QueueSource | undefined;
  // The bot's commands, once its setup declared them (the dispatcher is made after the dialogs).
  let commandsNow: DispatcherParts["commands"];
  const dialogs = new Dialogs({
    commandNames: () => commandsNow?.names(),
    store: store.namespace("dialogs"),
    wants: (type) => source?.want(type),
    selfId: (): number | undefined => contexts.self?.userId,
    commit,
    clock,
    log,
    health: storeHealth,
    // A dry run keeps no dialog (its questions were never sent); a backtest keeps them in its memory store.
    persist: !o.captured,
    presses: o.mode !== "webhook",
    members: dialogMembers(services, log, receives),
  });
  const contexts = new BotContexts({
    name,
    client,
    state: kv,
    log,
    settings: o.settings,
    services,
    clock,
    dialogs,
    dryRun: o.captured !== undefined || o.mode === "backtest",
    effects,
  });
  const failing = { letters, log, clock, metrics, health: storeHealth, handlerTimeoutMs: o.handlerTimeoutMs };
  const attempts = o.captured || o.mode === "backtest" ? undefined : store.namespace("attempts");
  const failures = new HandlerFailures({ ...failing, retries: o.retries, commit, attempts });
  const caches = new CacheSnapshot({ client, log, clock, services, once: o.mode === "backtest" });
  // A bot without a queue reads its users and groups again before a job too, once they are old.
  const jobs = jobRunner({ ...failing, effects }, failures);
  const runJob: RunJob = (...job) => caches.fresh()?.then(() => jobs(...job)) ?? jobs(...job);
  const scheduler = new BotScheduler({
    client,
    store,
    flush: o.flush,
    log,
    clock,
    contextDeps: () => contexts.deps(),
    lookups: () => services.lookups,
    runHandler: contexts.runHandler,
    runJob,
    storeHealth,
    handlerTimeoutMs: o.handlerTimeoutMs,
  });
  const webhook = { client, log, contexts, backoff: o.backoff, clock };
  return {
    effects,
    began: () => {
      startedAt = clock.now();
    },
    kv,
    services,
    contexts,
    scheduler,
    storeHealth,
    dispatcher: (composer, commands) => {
      commandsNow = commands;
      return new Dispatcher({
        composer,
        commands,
        contexts,
        queue: new ConversationQueue({
          concurrency: o.concurrency,
          handlerTimeoutMs: o.handlerTimeoutMs,
          log,
          clock,
        }),
        failures,
        ledgerStore: store.namespace("runtime"),
        ledgerCommits: { log, commit, syncCommit: o.syncCommit, health: { store: storeHealth, clock } },
        services,
        ownMessages: o.ownMessages,
        clock,
        log,
        metrics,
        letters,
        effects,
        dialogs,
      });
    },
    // Every property named: an object spread from `start` and then given a dozen more gets a
    // hidden class of its own, in each bot.
    queueSource: (dispatcher, start) => {
      source = new QueueSource({
        eventTypes: withDialogs(start.eventTypes, dialogs),
        savedTypes: start.eventTypes,
        signal: start.signal,
        lastContact: start.lastContact,
        onRegistered: start.onRegistered,
        onScheduledMessages: start.onScheduledMessages,
        onAuthFailed: start.onAuthFailed,
        client,
        log,
        clock,
        dispatcher,
        contexts,
        narrow: o.narrow,
        allPublicStreams: o.allPublicStreams,
        replay: o.replay,
        longpollMarginMs: o.longpollMarginMs,
        backoff: o.backoff,
        flush: o.flush,
        metrics,
      });
      return source;
    },
    stranded: strandedDialogs({
      bot: name,
      narrow: (o.mode ?? "queue") === "queue" ? o.narrow : undefined,
      log,
      entries: () => dialogs.entries(),
      channelName: (id) => services.channels.nameOf(id),
    }),
    webhookMode: (signal, registered, eventTypes) =>
      startWebhookMode({ ...webhook, signal, registered, caches: { snapshot: caches, eventTypes } }),
    fresh: () => caches.fresh(),
    deadLetterSource: (dispatcher, signal, replayJob) =>
      letters &&
      new DeadLetterSource({
        letters,
        dispatcher,
        replayJob,
        log,
        signal,
        ...(o.retryRequests ? { requests: o.retryRequests } : {}),
        ...(o.daemonId ? { daemonId: o.daemonId } : {}),
      }),
  };
}

/** The bot's event types, with those its waiting dialogs need (reactions, message moves and deletions). */
function withDialogs(types: readonly string[] | null, dialogs: Dialogs): readonly string[] | null {
  if (types === null) return types;
  const wanted = [
    ...(dialogs.buttons.waiting().length > 0 ? ["reaction"] : []),
    ...(waitsInChannels(dialogs.entries()) ? ["update_message"] : []),
    ...(waitsAtMessages(dialogs.entries()) ? ["delete_message"] : []),
  ];
  const more = wanted.filter((type) => !types.includes(type));
  return more.length === 0 ? types : [...types, ...more];
}
