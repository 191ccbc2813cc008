/**
 * What the failure stage (handler-failures.ts) is given: the bot's retry policy and where it keeps
 * dead letters, and, for each failed run, how to run it again and what to keep of it.
 */
import type { Logger } from "pino";
import type { DeadLetter, DeadLetterSource, DeadLetters } from "../state/dead-letters.ts";
import type { JsonValue, StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import type { RunHolder } from "./handler-names.ts";
import type { FailureMetrics } from "./incoming.ts";
import type { AttemptTurns } from "./replay-turns.ts";
import type { StoreHealth } from "./store-health.ts";

/**
 * How a failing handler is run again (config `retries`): after `backoffMs`, doubling up to
 * `maxBackoffMs`, until it has run `attempts` times.
 */
export interface RetryPolicy {
  /** Runs in all, the first included (1: never retried). */
  attempts: number;
  backoffMs: number;
  maxBackoffMs: number;
}

/** The pause before run `n + 1` after run `n` failed (n ≥ 1). */
export function retryDelay(policy: RetryPolicy, n: number): number {
  return Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** (n - 1));
}

export interface HandlerFailuresOptions {
  retries: RetryPolicy;
  /** Where events whose every attempt failed are kept; without it they are only logged. */
  letters: DeadLetters | undefined;
  /** Each later attempt is aborted after this long. */
  handlerTimeoutMs: number;
  log: Logger;
  clock: Clock;
  metrics: FailureMetrics | undefined;
  /** Makes a dead letter durable before its message is marked handled. */
  commit(): Promise<void>;
  /** Told when a run waiting for the store gets through (see store-health.ts). */
  health?: StoreHealth | undefined;
  /** Where a retried message's failed attempts are counted (failed-attempts.ts); none in a dry run. */
  attempts?: StateStore | undefined;
}

/** The failed event or job occurrence. */
export interface FailedRun {
  event: { type: string };
  source: DeadLetterSource;
  /** The conversation the event is ordered in (its queue key): each attempt's timeout names it. */
  conversation?: string;
  /** The dead letter this run replays, if it is one; once handled, `recordHandled` before its removal. */
  letter?: DeadLetter;
  recordHandled?(): Promise<void>;
  /** A replayed letter's turns: each later attempt waits for the bot's replay turn (replay-turns.ts). */
  turns?: AttemptTurns | undefined;
  /** The run's queue task: `left` once the stop left it (left-runs.ts), its attempt still running. */
  task?: { readonly left: boolean };
  /** Run the handler again, with a fresh context on `signal` (the attempt's timeout, or stop). */
  again(signal: AbortSignal, holder?: RunHolder): unknown;
  /** The effects the last run made (or found made), its `ctx.external` results too, for the dead letter to carry. */
  effects(): JsonValue[];
  /** The dialog the run replays, for the dead letter to carry. */
  dialog?: JsonValue;
  /** An event without a message id: its records' key and read-back bound, for the dead letter to carry. */
  records?: DeadLetter["records"];
  /** The failure is final (not retried again, nor replayed at the next start): end what the run left open. */
  gaveUp?(signal: AbortSignal): Promise<void>;
}

/** How a failed run ended (see `HandlerFailures.settle`). */
export type SettleOutcome = boolean | "resumes" | "replays";

/** What settles a failed run: `HandlerFailures`, as a cron job's runner sees it. */
export interface Settles {
  settle(run: FailedRun, error: unknown): Promise<SettleOutcome>;
  /** The bot is stopping: a run failing now was cut by the stop, no failure of its own. */
  readonly stopped: boolean;
  /** Some attempts counted before this start ran out (failed-attempts.ts). */
  readonly countsRanOut: boolean;
  /** Set when `run`'s attempts ran out before this start: it is settled with this instead of running. */
  ranOutRun(run: Pick<FailedRun, "event" | "source" | "dialog" | "letter">): Error | undefined;
  /** After a crash, a run taken up again (`again`) has its first attempt counted before it begins. */
  begins(
    run: Pick<FailedRun, "event" | "source" | "dialog" | "letter">,
    again: boolean,
  ): Promise<void> | undefined;
  /** `run`'s attempt ended without failing: the count `begins` made goes. */
  ran(run: Pick<FailedRun, "event" | "source" | "dialog" | "letter">): void;
}
