/**
 * How often a progress message may be edited. Edits share the bot's call budget with everything
 * else it does (200 calls a minute, 2,000 an hour on the real server), so the pause between two
 * edits of one message grows as the budget's free share shrinks, and an edit waits while the
 * budget would hold the call: it never queues in front of the bot's replies, never meets a 429.
 */
import type { RateBucket } from "../../api/rate-budget.ts";

/** The shortest pause between two edits of one message. */
export const MIN_EDIT_INTERVAL_MS = 1_000;
/** The longest: a message still moves twice a minute however low the budget. */
export const MAX_EDIT_INTERVAL_MS = 30_000;
/** Below this share of the minute's or the hour's calls left, edits slow down. */
const COMFORTABLE_SHARE = 0.5;

/**
 * The pause before the next edit of one message: `base` while at least half of the minute's and
 * the hour's calls are left; then longer in proportion (a quarter left: twice as long, a tenth:
 * five times), at most {@link MAX_EDIT_INTERVAL_MS}.
 */
export function editInterval(bucket: RateBucket, base: number, now: number): number {
  const snap = bucket.snapshot(now);
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

/**
 * The earliest time an edit may start: after `interval` since the last edit, when the budget
 * allows a call, and not while the calls left in the minute or the hour are within the reserve.
 */
export function nextEditAt(bucket: RateBucket, lastEditAt: number, interval: number, now: number): number {
  const snap = bucket.snapshot(now);
  const reserve = (limit: number) => Math.max(2, Math.ceil(limit * RESERVE_SHARE));
  const low =
    snap.perMinute - snap.usedMinute <= reserve(snap.perMinute) ||
    snap.remainingHour <= reserve(snap.perHour);
  const at = Math.max(lastEditAt + interval, bucket.nextStartAt(now));
  return low ? Math.max(at, now + RESERVE_RECHECK_MS) : at;
}
