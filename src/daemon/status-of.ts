/**
 * The daemon's status as `bothost status` and the `/status` page show it, built from each bot's
 * runtime status, its dead letters and its schedule.
 */

import { AUTH_REJECTED, isAuthError } from "../api/errors.ts";
import type { BucketSnapshot } from "../api/rate-budget.ts";
import { raceAbort, timeoutSignal } from "../api/sleep.ts";
import { bothostVersion } from "../api/version.ts";
import { DeclarationsRefused, refusalPlaces, refusalWords } from "../bot/setup-error.ts";
import type { LeasesUnread } from "../cluster/coordinator.ts";
import { isBothostError } from "../errors/bothost-error.ts";
import { whereThrown } from "../errors/where-thrown.ts";
import type { PacingSnapshot } from "../events/poll-pacing.ts";
import type {
  BotStatus,
  BucketStatus,
  BudgetStatus,
  DaemonStatus,
  RecentFailure,
} from "../http/daemon-status.ts";
import { STATUS_DIALOGS } from "../http/daemon-status.ts";
import { heldByRateLimit, leaseLostReason, RELOADING } from "../http/readiness.ts";
import type { DeadLetterOffice } from "../state/dead-letter-office.ts";
import type { DeadLetter } from "../state/dead-letters.ts";
import type { RedisStatus } from "../state/redis-url.ts";
import type { Clock } from "../time/clock.ts";
import type { WebhookRequests } from "../webhook/request-counts.ts";
import type { BotRuntime } from "./bot-runtime.ts";

/** How many recent dead letters the status lists. */
const RECENT_FAILURES = 20;
const NEXT_RUNS = 3;

export interface StatusSources {
  startedAt: number;
  /** The daemon's clock (the one the bots' times are read from): how long the dead letters are waited for. */
  clock: Clock;
  bots: readonly BotRuntime[];
  letters: DeadLetterOffice;
  /** Why a bot failed to start, by name (a setup that threw, rejected credentials). */
  startFailures: ReadonlyMap<string, string>;
  /** When the config in force was loaded. */
  configLoadedAt?: number;
  /** With `state.redis`: the primary reached and how. */
  redis?: RedisStatus | undefined;
  /** Cluster mode: the instance holding a bot's lease, as last read (within a ttl). */
  leaseHolder?: (bot: string) => string | undefined;
  /** Cluster mode: how long the leases have gone unread, once longer than a ttl, and why. */
  leasesUnread?: () => LeasesUnread | undefined;
  /** Cluster mode: why this instance lost a bot's lease, until it takes it again. */
  leaseLost?: (bot: string) => string | undefined;
  /** What a bot's inbound webhooks were sent, by webhook (with `http.listen`). */
  webhookRequests?: (bot: string) => Record<string, WebhookRequests> | undefined;
}

/** How long the status waits for the dead letters: it answers without them past that. */
const LETTERS_WAIT_MS = 2_000;

export async function statusOf(s: StatusSources): Promise<DaemonStatus> {
  const now = s.clock.now();
  let unread: string | undefined;
  const wait = timeoutSignal(
    s.clock,
    LETTERS_WAIT_MS,
    () => new Error(`no answer within ${LETTERS_WAIT_MS} ms`),
  );
  // The office leaves out a delivery kept while its handler still runs here: counted once it failed.
  const letters = await raceAbort(s.letters.list(), wait.signal)
    .catch((err: unknown) => {
      unread = `the state store did not list them: ${err instanceof Error ? err.message : String(err)}`;
      return [];
    })
    .finally(wait.clear);
  const perBot = new Map<string, number>();
  for (const l of letters) perBot.set(l.bot, (perBot.get(l.bot) ?? 0) + 1);
  const recentFailures: RecentFailure[] = letters
    .sort((a, b) => b.lastFailedAt.localeCompare(a.lastFailedAt))
    .slice(0, RECENT_FAILURES)
    .map((l) => ({ id: l.id, bot: l.bot, at: l.lastFailedAt, error: `${l.error.name}: ${l.error.message}` }));
  return {
    version: bothostVersion,
    pid: process.pid,
    startedAt: new Date(s.startedAt).toISOString(),
    uptimeSeconds: Math.round((now - s.startedAt) / 1000),
    configLoadedAt: new Date(s.configLoadedAt ?? s.startedAt).toISOString(),
    bots: s.bots.map((runtime) =>
      botStatus(runtime, perBot.get(runtime.name) ?? 0, s.startFailures.get(runtime.name), now, s),
    ),
    recentFailures,
    ...unconfiguredCounts(letters),
    ...(unread !== undefined && { deadLettersUnread: unread }),
    ...(s.redis ? { redis: s.redis } : {}),
  };
}

/** How many letters each bot no longer in the config keeps (the office marks theirs). */
function unconfiguredCounts(letters: readonly DeadLetter[]): Pick<DaemonStatus, "unconfiguredDeadLetters"> {
  const counts: Record<string, number> = {};
  for (const l of letters) if (l.unconfigured) counts[l.bot] = (counts[l.bot] ?? 0) + 1;
  return Object.keys(counts).length > 0 ? { unconfiguredDeadLetters: counts } : {};
}

/**
 * Why a standby bot names no holder while no round read the leases: a read failed (Redis), or
 * this instance's own rounds ran late (nothing failed: the process was held up).
 */
function unreadReason({ forMs, late }: LeasesUnread): string {
  const s = Math.round(forMs / 1000);
  return late
    ? `this instance's lease rounds are running late (the last one read the leases ${s} s ago): the process is starved of CPU or its event loop is blocked, and no instance is known to run it. Once a round runs, it shows which instance runs it, or this one takes it`
    : `the leases could not be read for ${s} s (is Redis reachable?): no instance is known to run it. Once Redis answers, a round of leases shows which instance runs it, or this one takes it`;
}

function botStatus(
  runtime: BotRuntime,
  deadLetters: number,
  startFailure: string | undefined,
  now: number,
  lease: Pick<StatusSources, "leaseHolder" | "leaseLost" | "leasesUnread" | "webhookRequests">,
): BotStatus {
  const st = runtime.status;
  const named = startFailure
    ? { state: "failed" as const, reason: startFailure }
    : (STATES[st.state] ?? { state: "stopped" });
  const { state } = named;
  // A start, or a running bot's polls and sends, that a 429 holds: until when.
  const reason =
    named.reason ??
    (state === "starting" || state === "running" ? heldByRateLimit(st.budget, now) : undefined);
  // A standby bot runs where its lease is: named, so that an instance that died (its lease not
  // expired yet) is told from one that runs the bot.
  const holder = state === "standby" || startFailure ? lease.leaseHolder?.(runtime.name) : undefined;
  const unread = state === "standby" && !holder ? lease.leasesUnread?.() : undefined;
  // Failed here, it may run on another instance (cluster mode): named, after why it failed here.
  const standby =
    holder && startFailure
      ? { leaseHolder: holder, reason: `${startFailure}; instance ${holder} runs it` }
      : holder
        ? {
            leaseHolder: holder,
            reason: `instance ${holder} holds its lease and runs it (should that instance be gone, an instance takes the bot once the lease expires, or at its next round when it runs on the same host, in the same container and as the same user)`,
          }
        : unread !== undefined && { reason: unreadReason(unread) };
  // Stopped because its lease was lost, not on purpose: why, and what comes next.
  const lost = state === "stopped" ? lease.leaseLost?.(runtime.name) : undefined;
  const lostLease = lost && {
    leaseLost: true as const,
    reason: leaseLostReason(lost),
  };
  // When the server sends it: a failed booking moved to go out late is sent after its occurrence.
  const bookings = [...runtime.scheduler.bookings.entries()].map(([name, b]) => ({
    name,
    at: new Date(b.target.timestamp * 1000).toISOString(),
  }));
  const jobs = runtime.scheduler
    .jobs()
    .flatMap((j) => (j.nextRunAt ? [{ name: j.id, at: j.nextRunAt.toISOString() }] : []));
  return {
    name: runtime.name,
    state,
    ...(reason ? { reason } : {}),
    ...standby,
    ...lostLease,
    queueId: st.queueId,
    ...(st.queueRegisteredAt !== undefined
      ? { queueAgeSeconds: Math.round((now - st.queueRegisteredAt) / 1000) }
      : {}),
    ...(st.lastEventAt !== undefined ? { lastEventAt: new Date(st.lastEventAt).toISOString() } : {}),
    handled: st.handled,
    failed: st.failed,
    deadLetters,
    nextRuns: [...bookings, ...jobs].sort((a, b) => a.at.localeCompare(b.at)).slice(0, NEXT_RUNS),
    dialogs: {
      waiting: st.dialogsWaiting ?? 0,
      list: runtime.dialogs(STATUS_DIALOGS),
      ...(st.endNotes.length > 0 && { notes: st.endNotes }),
    },
    ...(runtime.captured
      ? {
          dryRun: {
            captured: runtime.captured.count,
            recent: runtime.captured.recent.map(({ at, does }) => ({ at, does })),
          },
        }
      : {}),
    ...(st.storeFailure && st.state !== "standby" ? { store: st.storeFailure } : {}),
    ...webhooksOf(lease.webhookRequests?.(runtime.name)),
    ...(st.server ? { server: { version: st.server.version, featureLevel: st.server.featureLevel } } : {}),
    budget: budgetStatus(st.budget, st.pacing),
  };
}

const AUTH_FAILED = AUTH_REJECTED;

const webhooksOf = (w: Record<string, WebhookRequests> | undefined) => (w ? { webhooks: w } : {});

/** A runtime state as the status names it (anything else: stopped). */
const STATES: Record<string, Pick<BotStatus, "state" | "reason">> = {
  polling: { state: "running" },
  webhook: { state: "webhook" },
  standby: { state: "standby" },
  reloading: { state: "reloading", reason: RELOADING },
  idle: { state: "starting" },
  registering: { state: "starting" },
  backing_off: { state: "retrying", reason: "the event queue failed; retrying with backoff" },
  auth_failed: { state: "failed", reason: AUTH_FAILED },
};

/**
 * A start failure in words, for the status: one thrown by the bot's own code (its `setup`) says
 * what and where, as `bothost check` does, so that the operator needs no stack trace.
 */
export function startFailure(error: unknown): string {
  if (isAuthError(error)) return AUTH_FAILED;
  return `it failed to start: ${failureWords(error)}`;
}

/**
 * Why a bot's start failed, without a stack trace: the message, after `its code threw TypeError
 * at bots/ledger.ts:12:11: ` when the bot's own code threw it (not bothost on purpose), or after
 * the place of a declaration bothost refused (`bots/ledger.ts:9:9: `).
 */
export function failureWords(error: unknown): string {
  if (error instanceof DeclarationsRefused) return error.refusals.map((r) => refusalWords(r)).join(" · ");
  if (isBothostError(error)) return refusalWords(error, false);
  const at = whereThrown(error);
  const what = error instanceof Error ? error.message : String(error);
  return `${at ? `its code threw ${(error as Error).name} at ${at}: ` : ""}${what}`;
}

/**
 * A start failure as its log line carries it: a declaration bothost refused (or another error it
 * raised on purpose) is the user's to fix, so the message with the module, without a stack trace.
 */
export function failureLogFields(error: unknown, module: string | undefined): Record<string, unknown> {
  const at = refusalPlaces(error); // where in the bot's files, for a declaration refused
  if (error instanceof DeclarationsRefused) return { module, at, error: error.message };
  return isBothostError(error) ? { module, at, error: `${error.message} [${error.code}]` } : { err: error };
}

function budgetStatus(buckets: BucketSnapshot[], pacing: PacingSnapshot | undefined): BudgetStatus {
  const bucket = (name: string): BucketStatus => {
    const b = buckets.find((x) => x.bucket === name);
    return {
      usedMinute: b?.usedMinute ?? 0,
      perMinute: b?.perMinute ?? 0,
      usedHour: b?.usedHour ?? 0,
      perHour: b?.perHour ?? 0,
      remainingHour: b?.remainingHour ?? 0,
      rateLimited: b?.limited ?? 0,
      ...(b?.blockedUntil === undefined ? {} : { waitUntil: new Date(b.blockedUntil).toISOString() }),
    };
  };
  return {
    events: bucket("events"),
    other: bucket("other"),
    pollSpacingSeconds: (pacing?.spacingMs ?? 0) / 1000,
    steadyPollSpacingSeconds: (pacing?.steadySpacingMs ?? 0) / 1000,
  };
}
