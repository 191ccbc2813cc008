/**
 * How often a progress message may be edited. Edits share the bot's call budget with everything
 * else it does (200 calls a minute, 2,000 an hour on the real server), so the pause between two
 * edits of one message grows as the budget's free share shrinks, and an edit waits while the
 * budget would hold the call: it never queues in front of the bot's replies, never meets a 429.
 *
 * Pacing reads the budget's own clock, the one the client counts its calls by: a bot whose clock
 * reads another time (a backtest runs each message at the message's time) paces by its real calls.
 */
import type { RateBucket } from "../../api/rate-budget.ts";
import { sleep } from "../../api/sleep.ts";

/** The shortest pause between two edits of one message. */
export const MIN_EDIT_INTERVAL_MS = 1_000;
/** The longest: a message still moves twice a minute however low the budget. */
export const MAX_EDIT_INTERVAL_MS = 30_000;
/** Below this share of the minute's or the hour's calls left, edits slow down. */
const COMFORTABLE_SHARE = 0.5;

/** The share of a minute's calls the progresses of one account plan to spend on edits together. */
const EDIT_SHARE = 0.5;

/** The progresses under way per account budget, so that they share it. */
const active = new WeakMap<RateBucket, Set<object>>();

/** Count `progress` among its account's progresses under way until `end()`. */
export function enlist(bucket: RateBucket, progress: object): { end(): void } {
  const set = active.get(bucket) ?? new Set<object>();
  active.set(bucket, set);
  set.add(progress);
  return { end: () => set.delete(progress) };
}

/**
 * The pause before the next edit of one message: `base` while at least half of the minute's and
 * the hour's calls are left; then longer in proportion (a quarter left: twice as long, a tenth:
 * five times), at most {@link MAX_EDIT_INTERVAL_MS}. With many progresses under way on one
 * account, each gets its share of half the minute's calls: 100 of them on the server's 200 a
 * minute edit once every 60 s each, which keeps calls free for their final edits.
 */
export function editInterval(bucket: RateBucket, base: number): number {
  const fair = ((active.get(bucket)?.size ?? 1) * 60_000) / (bucket.limits.perMinute * EDIT_SHARE);
  return Math.min(MAX_EDIT_INTERVAL_MS * 2, Math.max(stretchedInterval(bucket, base), Math.round(fair)));
}

/** {@link editInterval} by the budget alone, not shared: for a progress's final edits. */
export function stretchedInterval(bucket: RateBucket, base: number): number {
  const snap = bucket.snapshot();
  const minuteShare = Math.max(0, snap.perMinute - snap.usedMinute) / snap.perMinute;
  const hourShare = snap.remainingHour / Math.max(1, snap.perHour);
  const share = Math.min(minuteShare, hourShare);
  if (share >= COMFORTABLE_SHARE) return base;
  const stretched = (base * COMFORTABLE_SHARE) / Math.max(share, 0.01);
  return Math.min(MAX_EDIT_INTERVAL_MS, Math.max(base, Math.round(stretched)));
}

/**
 * Calls of each window edits leave to everything else (a tenth, at least 2): replies, and calls
 * the bot's other clients make that this budget does not count.
 */
const RESERVE_SHARE = 0.1;
/** While within the reserve, an edit waits and looks again after this long. */
export const RESERVE_RECHECK_MS = 5_000;

/** Progress calls under way per account budget: counted before the client's limiter sees them. */
const underWay = new WeakMap<RateBucket, number>();
/** How often a call held by the reserve looks again. */
const GATE_RECHECK_MS = 250;
/**
 * Progress calls of one account under way at once, at most. A call is counted when this client
 * starts it; one that waits for a connection reaches the server later, and the server's window
 * then frees later than this client's count: few at once keep the two counts together.
 */
const MAX_UNDER_WAY = 8;

/**
 * Make `call` (one of a progress's posts, edits or read-backs) once the account has calls to
 * spare beyond the reserve, counting the progress calls already under way: so many progresses
 * at once never fill a window to its last call, where the slightest difference between this
 * client's count and the server's would meet a 429.
 */
export async function withinReserve<T>(
  bucket: RateBucket,
  call: () => Promise<T>,
  signal: AbortSignal,
): Promise<T> {
  for (;;) {
    const snap = bucket.snapshot();
    const busy = underWay.get(bucket) ?? 0;
    const minuteLeft = snap.perMinute - snap.usedMinute - busy;
    const spare = minuteLeft > reserve(snap.perMinute) && snap.remainingHour - busy > reserve(snap.perHour);
    if (spare && busy < MAX_UNDER_WAY) break;
    await sleep(bucket.clock, GATE_RECHECK_MS, signal);
  }
  underWay.set(bucket, (underWay.get(bucket) ?? 0) + 1);
  try {
    return await call();
  } finally {
    underWay.set(bucket, (underWay.get(bucket) ?? 1) - 1);
  }
}

const reserve = (limit: number) => Math.max(2, Math.ceil(limit * RESERVE_SHARE));

/**
 * The earliest time (by the budget's clock, as `lastEditAt` is) an edit may start: after `interval`
 * since the last edit, when the budget allows a call, and not while the calls left in the minute
 * or the hour are within the reserve.
 */
export function nextEditAt(bucket: RateBucket, lastEditAt: number, interval: number): number {
  const now = bucket.clock.now();
  const snap = bucket.snapshot(now);
  const low =
    snap.perMinute - snap.usedMinute <= reserve(snap.perMinute) ||
    snap.remainingHour <= reserve(snap.perHour);
  const at = Math.max(lastEditAt + interval, bucket.nextStartAt(now));
  return low ? Math.max(at, now + RESERVE_RECHECK_MS) : at;
}
