/** What every source hands the dispatch pipeline (an {@link Incoming}), and the types around it. */

import type { OpenProgresses } from "../effects/progress/open-progresses.ts";
import type { DeadLetter, DeadLetterSource } from "../state/dead-letters.ts";
import type { AnyEvent } from "../wire/events.ts";
import type { BaseContext, ContextExtra, JobContext, SendEffects, SignalSource } from "./context-types.ts";
import type { DialogRecord } from "./dialogs/dialog-record.ts";
import { ledgerIdOf } from "./event-fields.ts";
import type { AttemptTurns, LetterTurns } from "./replay-turns.ts";

/** Answers a message in the response of the HTTP request that delivered it (outgoing webhooks). */
export type ReplyFn = (content: string) => Promise<{ id: number }>;

/** What every source hands the pipeline. */
export interface Incoming {
  readonly event: AnyEvent;
  /** Fetched again after a lost queue (catch-up), not delivered live. */
  readonly replayed: boolean;
  /** Why the event failed its schema; it then reaches handlers as an unknown event. */
  readonly issue: string | undefined;
  /** Replaces `ctx.reply` (an outgoing webhook answers in its HTTP response). */
  readonly reply: ReplyFn | undefined;
  /**
   * Told once the message is recorded as a dialog's answer and marked handled: its dialog's run
   * goes on from the log (an outgoing webhook's delivery is answered then, not after that run).
   */
  readonly recorded?: () => void;
  /**
   * Delivered by a sender that repeats a delivery whose answer a crash cut off (an outgoing
   * webhook): a run again is not told from a first run, so its effects' records are read first.
   */
  readonly repeatable?: boolean;
  /**
   * Awaited before its run sends a dialog's question: an outgoing webhook's delivery not answered
   * yet is kept first (reply-exchange.ts), so that a kill once the question is out loses no dialog.
   */
  readonly beforeAsking?: () => Promise<void>;
  /** Set when an operator replays a dead letter: the ledger is bypassed, the letter updated. */
  readonly letter?: DeadLetter;
  /** Told whether a replayed dead letter was handled. */
  readonly onReplayed?: (handled: boolean) => void;
  /** A replayed letter's attempts' turns among the bot's replays (replay-turns.ts). */
  readonly turns?: AttemptTurns;
  /** A replayed letter handled: awaited before the letter is removed (a kept delivery's ledger record). */
  readonly recordHandled?: () => Promise<void>;
  /** Set for a run of a dialog: the record it replays (its event is the dialog's first message). */
  readonly dialog?: DialogRecord;
  /**
   * A dialog's run: how what ran it reached the bot (its answer's source, `deadline`, or what
   * started the dialog), for its dead letter; unset for one run from its log at a start (`catch-up`).
   */
  readonly came?: DeadLetterSource;
  /** The id of the event queue that delivered it: with the event's id, the event's identity (run-keys.ts). */
  readonly queue?: string;
  /**
   * A saved event run again at a start (events/saved-events.ts): when it was kept (epoch ms). Its
   * first run began no earlier, so a read-back of a send that run made is bounded from then.
   */
  readonly keptAt?: number;
  /**
   * When the pipeline accepted it (epoch ms, the bot's clock): a message that came before its
   * question's deadline is not late for having waited in its conversation's queue (`matched`).
   */
  reachedAt?: number;
}

/** The bot's user, as the server knows it. */
export interface BotIdentity {
  userId: number;
  email: string;
  /** The bot's full name: how a mention of it is written (`@**Full Name**`). */
  fullName?: string;
}

/** What the failure stage reports (see handler-failures.ts). */
export interface FailureMetrics {
  handlerRetried(type: string): void;
  deadLettered(type: string): void;
}

/** What the pipeline reports per event (the daemon's /metrics, bound to the bot's name). */
export interface DispatchMetrics extends FailureMetrics {
  eventReceived(type: string): void;
  /** The type's series, at 0 before its first count: a cron job's at its first run, which no arrival counts. */
  typeSeen(type: string): void;
  eventHandled(type: string, seconds: number): void;
  eventFailed(type: string, seconds: number): void;
  /** An event failed for good: kept as a dead letter, or it threw NoRetry with deadLetter: false. */
  eventFailedForGood(type: string): void;
  /** A run failed on a state store outage, not in the handler (each attempt counts). */
  storeOutage(type: string, seconds: number): void;
  /** Webhook mode: a delivery dropped as older than the last messages handled (maybe never handled). */
  lateDelivery(): void;
}

/**
 * Stage 4 for a handler that is not an event's (`bot.onStart()`, a cron job, an inbound
 * webhook): its context is the bot's, with `external` (once per `effects`' event), made with
 * `source`, the kind (`on-start`, `job`, `inbound-webhook`: a dialog it starts keeps it for its
 * first run's dead letter), and `extend` adds the kind's own members; whatever `handler` throws
 * reaches the caller.
 * `effects`: the records its sends and externals go through. `staged`: the run's `ctx.state`
 * writes are kept until `handler` succeeds, then applied (marked under `once`, so a later run of
 * the same occurrence applies nothing, for `keptMs` if given, else the bot's default), and the
 * result is a promise that resolves after them; without it `ctx.state` writes at once
 * (`bot.onStart()`). `letter`: the run is a dead letter's replay (a cron job's), which no one
 * waits on: its calls wait in the budget's background lane, as an event letter's do.
 */
export type RunHandler = <C, R>(
  signal: SignalSource,
  source: DeadLetterSource,
  bindings: Record<string, unknown>,
  extend: (base: BaseContext<unknown> & Pick<JobContext<unknown>, "external">) => C,
  handler: (ctx: C) => R,
  effects?: SendEffects,
  staged?: { once: string | undefined; keptMs?: number },
  letter?: boolean,
) => R;

/** A cron job's occurrence: what its dead letter keeps as the event. */
export interface JobOccurrence {
  type: "cron_job";
  /** The job's id (`options.id`, else its expression and time zone). */
  job: string;
  /** ISO 8601. */
  scheduledFor: string;
  firedAt: string;
  catchUp: boolean;
}

/**
 * Runs a job's handler once, on `signal`, its sends going through `effects`, its state writes
 * staged and marked applied under `once` (the occurrence's key).
 */
export type JobAttempt = (
  signal: AbortSignal,
  effects: SendEffects | undefined,
  once: string,
) => Promise<unknown>;

/**
 * Stages 4–5 for a cron job's occurrence: run, retry, dead letter. True when handled; never rejects.
 * `resumed`: the occurrence's handler began before (a crash cut it short), so its effect records
 * are read, as for a dead letter's replay.
 */
export type RunJob = (
  occurrence: JobOccurrence,
  attempt: JobAttempt,
  signal: AbortSignal,
  letter?: DeadLetter,
  resumed?: boolean,
  /** Settles once the occurrence's mark as under way is durable: each effect waits for it. */
  marked?: Promise<void>,
  /** How long the occurrence's effect records are kept, if not the bot's default. */
  keptMs?: number,
  /** A replayed letter's attempts' turns among the bot's replays (replay-turns.ts). */
  turns?: LetterTurns,
  /** `left` once the bot's stop left the run still going (left-runs.ts): nothing of it is recorded then. */
  task?: { readonly left: boolean },
) => Promise<boolean>;

export interface DispatchStats {
  received: number;
  handled: number;
  failed: number;
  replayed: number;
  /** Messages dropped as handled already (or being handled). */
  duplicates: number;
  /**
   * Webhook mode: deliveries dropped as older than every message the ledger keeps (below its
   * floor), not known to be handled: they may never have been.
   */
  late: number;
  gaps: number;
}

/** Counters before any event. */
export const noEvents = (): DispatchStats => ({
  received: 0,
  handled: 0,
  failed: 0,
  replayed: 0,
  duplicates: 0,
  late: 0,
  gaps: 0,
});

/**
 * What a dialog `ctx.startDialog` begins in `incoming`'s run names as its start, for its first
 * run's dead letter: `incoming`'s source, a replayed letter's own.
 */
export function startedBy(incoming: Incoming): DeadLetterSource {
  return incoming.letter?.source ?? sourceOf(incoming);
}

/** A context's extra with no issue or progresses: one frozen object per kind, not one per message. */
const PLAIN_EXTRAS: [
  Partial<Record<DeadLetterSource, ContextExtra>>,
  Partial<Record<DeadLetterSource, ContextExtra>>,
] = [{}, {}];

/** What `incoming`'s context is made with (createContext); `progresses`: an earlier attempt's. */
export function contextExtraOf(
  incoming: Incoming,
  replayed: boolean,
  progresses?: OpenProgresses,
): ContextExtra {
  const source = startedBy(incoming);
  const { issue } = incoming;
  if (issue || progresses)
    return { replayed, source, ...(issue && { eventIssue: issue }), ...(progresses && { progresses }) };
  const plain = PLAIN_EXTRAS[replayed ? 1 : 0];
  plain[source] ??= Object.freeze({ replayed, source });
  return plain[source];
}

export function sourceOf(incoming: Incoming): DeadLetterSource {
  if (incoming.letter) return "replay";
  if (incoming.came) return incoming.came;
  if (incoming.reply) return "webhook";
  return incoming.replayed ? "catch-up" : "queue";
}

/**
 * The source of a dialog's run (see `came`): its answer's, or the late message's that timed it
 * out; a question deleted while the bot ran is live (`queue`).
 */
export function cameBy(incoming: Incoming | undefined): DeadLetterSource {
  return incoming ? sourceOf(incoming) : "queue";
}

/**
 * The key a run's state writes are marked applied under, the same for every run of the event: a
 * message's id (live, caught up or replayed), else a replayed dead letter's id. Other events are
 * never run again once a run succeeded, so their writes need no marker.
 */
export function stateKeyOf(incoming: Incoming): string | undefined {
  const id = ledgerIdOf(incoming.event);
  if (id !== undefined) return `m:${id}`;
  return incoming.letter ? `l:${incoming.letter.id}` : undefined;
}

/** What the failure stage keeps of a replayed letter's run: the letter, its handled record, its turns. */
export function replayedOf(incoming: Incoming): {
  letter?: DeadLetter;
  recordHandled?: (() => Promise<void>) | undefined;
  turns?: AttemptTurns | undefined;
} {
  const { letter, recordHandled, turns } = incoming;
  return letter ? { letter, recordHandled, turns } : {};
}
