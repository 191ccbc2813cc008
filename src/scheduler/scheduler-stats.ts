/** Counters of one bot's scheduler, for metrics. They only grow (reset on restart). */
export interface SchedulerStats {
  /** Recurring occurrences booked on the server (POST). */
  booked: number;
  /** Bookings found on the server and taken over instead of booking again (after a crash or a lost state). */
  adopted: number;
  /** Booked occurrences the server sent (their booking disappeared at or after its time). */
  delivered: number;
  /** Bookings that disappeared before their time (cancelled); that occurrence is skipped. */
  cancelled: number;
  /** Bookings the server marked failed. */
  failed: number;
  /** Failed bookings moved to a new time (at most once per occurrence). */
  rescheduled: number;
  /** Bookings deleted and booked again because the announcement changed (cron, time zone, recipient). */
  replaced: number;
  /** Attempts to book or reconcile that threw (retried with backoff). */
  bookingErrors: number;
  /** Local cron job runs started. */
  jobRuns: number;
  /** Local cron job runs that threw. */
  jobErrors: number;
  /** Local cron job occurrences not run (missed while down with policy "skip", or still running). */
  jobsSkipped: number;
}

export function newSchedulerStats(): SchedulerStats {
  return {
    booked: 0,
    adopted: 0,
    delivered: 0,
    cancelled: 0,
    failed: 0,
    rescheduled: 0,
    replaced: 0,
    bookingErrors: 0,
    jobRuns: 0,
    jobErrors: 0,
    jobsSkipped: 0,
  };
}
