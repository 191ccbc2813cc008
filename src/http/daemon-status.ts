import type { DialogView } from "../pipeline/dialogs/dialogs.ts";
import type { PendingNote } from "../pipeline/dialogs/pending-notes.ts";
import type { StoreFailure } from "../pipeline/store-health.ts";
import type { RedisStatus, SentinelsReached } from "../state/redis-url.ts";
import type { WebhookRequests } from "../webhook/request-counts.ts";

export type { PendingNote } from "../pipeline/dialogs/pending-notes.ts";

/**
 * What `bothost status`, `/admin/status` and the `/status` page show: the daemon and each bot as an
 * operator needs them. The daemon builds it (src/daemon/status-of.ts); the listener only serves it.
 */

/** One bot, as the status shows it. */
export interface BotStatus {
  name: string;
  /**
   * starting, running, retrying, stopped, failed, standby (another instance runs it), webhook,
   * reloading (a reload restarts it: its old version stops, its new one is not added yet).
   */
  state: "starting" | "running" | "retrying" | "stopped" | "failed" | "standby" | "webhook" | "reloading";
  /** Why the bot is not running, in words (absent when it runs). */
  reason?: string;
  queueId: string | null;
  /** Seconds since the current event queue was registered. */
  queueAgeSeconds?: number;
  /** ISO 8601: when the bot last received an event. */
  lastEventAt?: string;
  handled: number;
  /**
   * Events whose handling failed for good (every attempt, or NoRetry), each once; not each attempt
   * that threw, which `bothost_events_failed_total` counts; `bothost_events_failed_for_good_total`
   * counts these.
   */
  failed: number;
  deadLetters: number;
  /** The next recurring announcements and cron runs, soonest first. */
  nextRuns: { name: string; at: string }[];
  /**
   * The open dialogs (`ctx.prompt`): how many, and the oldest of them (at most
   * {@link STATUS_DIALOGS}; `bothost dialogs` lists them all), and the ended dialogs' end notes
   * not said yet (`notes`, as in {@link BotDialogs}; absent when none).
   */
  dialogs: { waiting: number; list: DialogView[]; notes?: PendingNote[] };
  /** `dry_run: true`: the writes it captured instead of making them, and the latest few. */
  dryRun?: { captured: number; recent: { at: string; does: string }[] };
  /**
   * The state store fails the bot's writes (a Redis out of reach, the embedded store's disk full):
   * since when, the last failure's code and message, and how many writes failed. Absent while they land.
   */
  store?: StoreFailure;
  /**
   * Cluster mode: stopped here because this instance lost the bot's lease (its renewals failed:
   * Redis out of reach), not on purpose; `reason` says why and what comes next. Until it is taken again.
   */
  leaseLost?: true;
  /** Cluster mode: the instance holding the bot's lease, if known. */
  leaseHolder?: string;
  server?: { version: string; featureLevel: number };
  /** The account's call budgets: calls in the last minute and hour against the limits, per bucket. */
  budget?: BudgetStatus;
  /**
   * Its inbound webhooks' requests since the daemon started, by webhook name and how they were
   * answered (with `http.listen`; absent until one was sent anything).
   */
  webhooks?: Record<string, WebhookRequests>;
}

/** Why no instance is named for a standby bot: no round could read the leases. */
export const UNREAD = "the leases could not be read: see bothost status";
/** Why no instance is named for a standby bot: this instance's rounds ran late, none read the leases. */
export const LATE = "this instance's lease rounds are running late: see bothost status";
/**
 * Why no instance is named for a standby bot while the leases are read: none other held its lease
 * at the last round and no refused acquisition or renewal named one since (its lease free, or held
 * here then and handed over since). A lease lost to another instance names that one at once.
 */
export const NO_HOLDER =
  "no other instance held its lease at the last round of leases (it was free, or held here and handed over since): the next round names the one that takes it";

/** Why a standby bot's listing names no instance running it (see {@link BotDialogs}). */
export function noHolderWhy({
  leasesUnread,
  leasesLate,
}: Pick<BotDialogs, "leasesUnread" | "leasesLate">): string {
  return leasesLate ? LATE : leasesUnread ? UNREAD : NO_HOLDER;
}

/** One bot's open dialogs, oldest first (`bothost dialogs`, `/admin/dialogs`). */
export interface BotDialogs {
  bot: string;
  dialogs: DialogView[];
  /** Another instance of the cluster runs the bot: its dialogs are listed (and ended) there. */
  elsewhere?: true;
  /** That instance, when this one knows it. */
  leaseHolder?: string;
  /** No instance is named because no round read the leases for longer than a ttl. */
  leasesUnread?: true;
  /** With `leasesUnread`: no read failed, this instance's rounds ran late (its process held up), not Redis. */
  leasesLate?: true;
  /**
   * The bot is stopped here (its lease lost, as in a Redis outage): its dialogs are as this
   * instance last knew them, and no answer is taken until the bot runs again.
   */
  stopped?: true;
  /**
   * The bot has not started here yet (its start under way, or failed before it read its dialogs):
   * they are listed as the state store keeps them, and none is ended here until it runs.
   */
  notStarted?: true;
  /**
   * Ended dialogs whose end note (an operator's note, or that the bot's code changed) is not said
   * to their person yet: read from the state store with no daemon running; in a running daemon, as
   * the bot last knew them (a stopped bot's, said at its next start; a running bot's, being said
   * now, or left to its next start by a send that failed). Absent when there are none.
   */
  notes?: PendingNote[];
}

/** The most dialogs a bot's status lists. */
export const STATUS_DIALOGS = 50;

/** One budget of an account (`events`: GET and DELETE /events; `other`: every other call). */
export interface BucketStatus {
  usedMinute: number;
  perMinute: number;
  usedHour: number;
  perHour: number;
  remainingHour: number;
  /** 429s received since the daemon started. */
  rateLimited: number;
  /** While the server's 429 holds the bucket's calls: when the next may go (ISO 8601). */
  waitUntil?: string;
}

/** A bot's budgets and how its polls are paced. */
export interface BudgetStatus {
  events: BucketStatus;
  other: BucketStatus;
  /** The wait before the latest poll, in seconds: 0 while traffic is light. */
  pollSpacingSeconds: number;
  /** The spacing sustained traffic settles to, in seconds. */
  steadyPollSpacingSeconds: number;
}

/** A recent dead letter, for the page. */
export interface RecentFailure {
  id: string;
  bot: string;
  at: string;
  error: string;
}

/** The daemon as `bothost status` shows it: version, uptime, every bot, recent failures. */
export interface DaemonStatus {
  version: string;
  pid: number;
  startedAt: string;
  uptimeSeconds: number;
  /** ISO 8601: when the daemon loaded the config it runs (at start, then at each applied reload). */
  configLoadedAt: string;
  bots: BotStatus[];
  recentFailures: RecentFailure[];
  /**
   * How many dead letters each bot no longer in the config (removed or renamed) still keeps: they
   * can be listed and dropped with `bothost failed`, not retried. Absent when there are none.
   */
  unconfiguredDeadLetters?: Record<string, number>;
  /**
   * Why the dead letters could not be read (the state store out of reach, or slower than 2 s):
   * the status is given without them (no recent failures, each bot's count 0).
   */
  deadLettersUnread?: string;
  /** With `state.redis`: the primary the store reaches, and whether through Sentinel. */
  redis?: RedisStatus;
}

/** The Redis line of the status: the primary reached, and how. */
export function redisLine(r: RedisStatus): string {
  const n = r.sentinel?.sentinels.length ?? 0;
  const reached = r.sentinelsReached;
  const answering = reached ? sentinelsLine(reached, n) : `${n} Sentinel${n === 1 ? "" : "s"}`;
  const via = r.sentinel
    ? `through Sentinel (master "${r.sentinel.name}", ${answering})`
    : "direct (no Sentinel)";
  const failovers = `${r.failovers} failover${r.failovers === 1 ? "" : "s"} seen`;
  const writes = r.replicaConfirmed ? "writes confirmed on the replicas" : "writes not waiting for replicas";
  const primary =
    r.primary === undefined
      ? "(not connected yet)"
      : `${r.primary}${r.disconnected ? " (the last reached: not connected now, reconnecting)" : ""}`;
  return `Redis primary ${primary}, ${via}; ${failovers}; ${writes}`;
}

/** A bot's writes the state store fails, in words. */
export function storeLine(f: StoreFailure): string {
  const since = f.since.replace(/\.\d+Z$/, "Z");
  return `the state store fails its writes since ${since} (${f.code}, ${f.failures} failed): ${f.error}`;
}

/** An inbound webhook's requests, in words: how many, how they were answered, the last one's time. */
export function webhookCounts(w: WebhookRequests): string {
  const parts = [`${w.ok} ok`, `${w.refused} refused`, `${w.failed} failed`, `${w.unavailable} unavailable`];
  const last = w.lastAt.replace(/\.\d+Z$/, "Z");
  return `${w.requests} request${w.requests === 1 ? "" : "s"} (${parts.join(", ")}), last ${last}`;
}

/** How many Sentinels answer, too few for a failover, and those refusing or naming another primary. */
function sentinelsLine(reached: SentinelsReached, n: number): string {
  const silent = reached.silent.length > 0 ? `; silent: ${reached.silent.join(", ")}` : "";
  const low =
    reached.answered < reached.needed ? `, too few for a failover (it needs ${reached.needed}${silent})` : "";
  const refusing = (reached.refusing ?? []).map(
    (r) => `, ${r.sentinel} refuses the authentication: ${r.why}`,
  );
  const other = (reached.otherPrimary ?? []).map(
    (o) => `, ${o.sentinel} names another primary (${o.names}) than most Sentinels`,
  );
  return `${reached.answered} of ${n} Sentinels answering${low}${refusing.join("")}${other.join("")}`;
}
