/** How long effect records are kept, and how far apart the server's clock and this one may be. */

/**
 * How far the server's clock may be behind this machine's: a read-back bounded by a time taken
 * here (a cron job's firing) looks at what the server stamped from this many seconds before it.
 */
export const SERVER_CLOCK_SLACK_S = 30;

/**
 * The least time a bot's effect records (and markers of applied state writes) are kept: past a
 * run's retries and a restart (a dead letter carries its own effects).
 */
export const EFFECT_RECORDS_MIN_TTL_MS = 6 * 3_600_000;

/** Records are kept this much past the last time their event can run again (clocks disagree). */
export const EFFECT_RECORDS_MARGIN_MS = 3_600_000;
