/**
 * What to do with a booking the server marked failed (NOTES §9: it gives up on a message more
 * than 10 minutes late, or one it may no longer send). The policy:
 *
 * - The first failure of an occurrence at most `retryWithinMs` (default 30 minutes) after its
 *   time: move the booking to one minute from now (the server needs a new time to revive it),
 *   so the announcement goes out late rather than never.
 * - A second failure of the same occurrence (the cause was not lateness, or the server is still
 *   behind), or an occurrence older than that: drop the booking and book the next occurrence.
 *   Dropping is logged as an error.
 */

/** How far ahead of "now" a failed booking is moved, so the server's next minute check takes it. */
export const RESCHEDULE_LEAD_MS = 60_000;
export const DEFAULT_RETRY_WITHIN_MS = 30 * 60_000;

export type FailedDecision =
  | { action: "reschedule"; atMs: number }
  | { action: "drop"; reason: "failed-again" | "too-late" };

/**
 * @example
 * ```ts
 * decideFailed({ occurrenceMs: Date.parse("2026-03-02T08:00Z"), retried: false, nowMs: Date.parse("2026-03-02T08:11Z") });
 * // { action: "reschedule", atMs: <08:12> }
 * ```
 */
export function decideFailed(input: {
  occurrenceMs: number;
  retried: boolean;
  nowMs: number;
  retryWithinMs?: number;
}): FailedDecision {
  if (input.retried) return { action: "drop", reason: "failed-again" };
  if (input.nowMs - input.occurrenceMs > (input.retryWithinMs ?? DEFAULT_RETRY_WITHIN_MS)) {
    return { action: "drop", reason: "too-late" };
  }
  return { action: "reschedule", atMs: input.nowMs + RESCHEDULE_LEAD_MS };
}
