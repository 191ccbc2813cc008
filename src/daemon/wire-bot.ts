/**
 * The one place a bot's parts are built (its composition root). Each part gets the settings and
 * collaborators it uses, by name; no options bag travels down. Settings arrive complete: their
 * defaults are the config schema's (config/schema.ts), so no layer below has one of its own.
 * Every part reads and waits on the same clock.
 *
 * What exists from the start: the bot's state, helpers, contexts, failure handling and
 * scheduler. What needs the module's `setup` (the dispatcher, built around its composer) or a
 * start (a source, bound to that start's signal) is made by the functions returned here.
 */
import type { Logger } from "pino";
import type { CaptureLog } from "../api/capture.ts";
import type { Client } from "../api/create-client.ts";
import type { SharedAccount } from "../bot/commands/shared-account.ts";
import type { BotDefinition } from "../bot/define-bot.ts";
import type { BotConfig } from "../config/schema.ts";
import { BotServices } from "../effects/bot-services.ts";
import {
  EFFECT_RECORDS_MARGIN_MS,
  EFFECT_RECORDS_MIN_TTL_MS,
  EffectRecords,
} from "../effects/effect-records.ts";
import { roleName } from "../effects/users/roles.ts";
import { unknownGroupCheck } from "../effects/users/user-groups.ts";
import { DeadLetterSource, type RetryRequests } from "../events/dead-letter-source.ts";
import { QueueSource, type QueueStart } from "../events/queue-source.ts";
import type { RuntimeMetricsSink } from "../http/bothost-metrics.ts";
import { BotContexts } from "../pipeline/bot-contexts.ts";
import type { Composer } from "../pipeline/composer.ts";
import type { BotContext } from "../pipeline/context.ts";
import { ConversationQueue } from "../pipeline/conversation-queue.ts";
import { waitsAtMessages } from "../pipeline/dialogs/dialog-deletions.ts";
import { waitsInChannels } from "../pipeline/dialogs/dialog-moves.ts";
import { Dialogs } from "../pipeline/dialogs/dialogs.ts";
import { Dispatcher } from "../pipeline/dispatcher.ts";
import type { DispatcherParts } from "../pipeline/dispatcher-parts.ts";
import { HandlerFailures, jobRunner, type RetryPolicy } from "../pipeline/handler-failures.ts";
import type { RunJob } from "../pipeline/incoming.ts";
import type { LetterTurns } from "../pipeline/replay-turns.ts";
import { StoreHealth } from "../pipeline/store-health.ts";
import { BotScheduler } from "../scheduler/bot-scheduler.ts";
import type { DeadLetter, DeadLetters } from "../state/dead-letters.ts";
import { KV } from "../state/kv.ts";
import { MemoryStore } from "../state/memory-store.ts";
import type { StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import { CacheSnapshot, type SnapshotTypes } from "../webhook/cache-snapshot.ts";
import { startWebhookMode } from "../webhook/webhook-mode.ts";
import type { Narrow } from "../wire/records.ts";
import type { RegisterResponse } from "../wire/responses.ts";
import type { ServerCheckResult } from "./server-check.ts";
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

/** Retry delays for a server that is down or failing (registration and polls): first and cap. */
export const SERVER_BACKOFF = Object.freeze({ initialMs: 500, maxMs: 30_000 });

/** What one bot is built from (the daemon fills it from the bot's config). */
export interface BotRuntimeOptions {
  name: string;
  definition: BotDefinition<never, never>;
  settings: unknown;
  client: Client;
  /** The root store; the bot gets `<name>/kv` for ctx.state and `<name>/runtime` for the ledger. */
  store: StateStore;
  /** Make the store's writes durable against a machine crash (coalesced by the caller). */
  flush(): Promise<void>;
  /** Make the store's writes survive a crash of this process (cheaper than `flush`); default `flush`. */
  commit?(): Promise<void>;
  /** The store's synchronous commit, where it has one (a solo daemon's FileStore): see LedgerCommits. */
  syncCommit?: { ready(): boolean; commit(): boolean };
  log: Logger;
  events?: readonly string[];
  narrow?: Narrow;
  allPublicStreams?: boolean;
  ownMessages: boolean;
  concurrency: number;
  handlerTimeoutMs: number;
  replay: { maxMessages: number; maxAgeMs: number };
  /** Content over max_message_length: `split` into several messages, or `reject`. */
  longMessages: "split" | "reject";
  /** The config's `command_prefix`: commands also run from messages starting with it. */
  commandPrefix?: string;
  /** The daemon's other bots on this bot's account, and this bot's place in the config. */
  account?: { shared: SharedAccount; order: number };
  /** The config's `webhooks` names (each must be one the module declares), with their places in it. */
  webhookNames?: ReadonlyMap<string, string | undefined>;
  /** The config has no `http` listener: the module's inbound webhooks cannot be reached (a warning). */
  noListener?: boolean;
  /** Added to the server's long-poll timeout to make a poll's HTTP timeout (config `longpoll_margin`). */
  longpollMarginMs: number;
  /** Retry delays for a server that is down or failing ({@link SERVER_BACKOFF} unless a test tunes them). */
  backoff: { initialMs: number; maxMs: number };
  /** What every part of the bot reads the time from and waits on. */
  clock: Clock;
  /**
   * `"webhook"`: messages arrive by outgoing-webhook POSTs (`deliver`); no event queue is kept.
   * `"backtest"`: no queue, no jobs, no onStart: history is handed in by `deliver` (backtest.ts).
   */
  mode?: "queue" | "webhook" | "backtest";
  /** Counts events, handler durations, registrations, replays and gaps. */
  metrics?: RuntimeMetricsSink;
  /** How a handler that throws is run again (config `retries`). */
  retries: RetryPolicy;
  /** `dry_run: true`: the writes captured (report claims then stay in memory, so they are not kept). */
  captured?: CaptureLog;
  /** Where events whose every attempt failed are kept, and replayed from (`bothost failed retry`). */
  letters?: DeadLetters;
  /** Where the bot hears of later retry requests (the daemon's one watcher); default: at start only. */
  retryRequests?: RetryRequests;
  /**
   * The daemon's id, new at each start of the process and kept across reloads: marks the letters
   * of deliveries whose run still goes here (see DeadLetter.runningIn); default one per runtime.
   */
  daemonId?: string;
  /**
   * Run at each start before the bot's state is read (`server-check.ts`): rejects when the state
   * belongs to another server. `queue`: the bot registers a queue next.
   */
  checkServer?(signal: AbortSignal, queue: boolean): Promise<ServerCheckResult>;
}

/**
 * A bot's config entry as its runtime's options (the parts the YAML decides); `listening` false: the
 * config has no `http` listener (its inbound webhooks are warned of); `places`: its webhooks' places.
 */
export function optionsFromConfig(c: BotConfig, listening?: boolean, places?: ReadonlyMap<string, string>) {
  return {
    noListener: listening === false,
    ...(c.events ? { events: c.events } : {}),
    ...(c.narrow ? { narrow: c.narrow.map(([op, operand]) => [op, operand] as [string, string]) } : {}),
    ...(c.all_public_streams !== undefined ? { allPublicStreams: c.all_public_streams } : {}),
    ownMessages: c.own_messages,
    concurrency: c.concurrency,
    handlerTimeoutMs: c.handler_timeout,
    replay: { maxMessages: c.replay.max_messages, maxAgeMs: c.replay.max_age },
    longMessages: c.long_messages,
    ...(c.command_prefix !== undefined ? { commandPrefix: c.command_prefix } : {}),
    ...(c.outgoing_webhook ? { mode: "webhook" as const } : {}),
    ...(c.webhooks ? { webhookNames: new Map(Object.keys(c.webhooks).map((n) => [n, places?.get(n)])) } : {}),
    retries: {
      attempts: c.retries.attempts,
      backoffMs: c.retries.backoff,
      maxBackoffMs: c.retries.max_backoff,
    },
  };
}

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
  // A question for a role checks people the users cache knows: without `track("users")`, it says so once.
  let toldRoles = false;
  const untrackedRoles = () => {
    if (toldRoles || receives("realm_user")) return;
    toldRoles = true;
    log.warn(
      'a question for a role checked someone the users cache does not know, so they cannot answer it; call bot.track("users") in setup.',
    );
  };
  const unknownGroup = unknownGroupCheck();
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
    members: {
      inGroup: (group, userId) => {
        if (unknownGroup(services.groups, group))
          log.warn(
            { group },
            `a question for the group "${group}" checked an answer, but the server has no such group, so nobody can answer it: check the group's name in the prompt's from`,
          );
        return services.groups.has(group, userId);
      },
      roleOf: (userId) => {
        const user = services.users.peek(userId);
        if (user === undefined) untrackedRoles();
        return roleName(user?.role);
      },
    },
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
