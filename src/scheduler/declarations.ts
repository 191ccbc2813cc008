/** What `bot.recurring()` and `bot.cron()` declare in a bot's setup. */

/** An occurrence as its time zone reads it: what a topic template or function can name. */
export interface OccurrenceTime {
  /** `2026-11-30` */
  date: string;
  /** `Monday` */
  weekday: string;
  /** `09:30` (24-hour) */
  time: string;
}

/** A recurring announcement, kept booked on the server as a scheduled message. */
export interface RecurringAnnouncement {
  /** Five-field cron expression (six with seconds), e.g. `"0 9 * * MON"`. */
  cron: string;
  /** IANA time zone the cron is read in, e.g. `"Europe/Berlin"`. */
  timezone: string;
  /** A channel (name or id), or a list of users (ids or emails) for a direct message. */
  to: string | number | readonly (string | number)[];
  /**
   * Required for channels. A fixed text; a template naming the occurrence in `timezone`
   * (`"standup {{date}}"`: `{{date}}` 2026-11-30, `{{weekday}}` Monday, `{{time}}` 09:30); or a
   * function of the occurrence, called when it is booked, e.g. `(at, local) => \`standup ${local.date}\``.
   */
  topic?: string | ((occurrence: Date, local: OccurrenceTime) => string);
  /**
   * The message, Markdown; or a function computing it when an occurrence is booked (right after
   * the previous one was sent), e.g. to read a saved snippet. Its `signal` aborts past the bot's
   * `handler_timeout` and when the bot stops: pass it to the calls it makes (`fetch`, `bot.api`).
   */
  content: string | ((occurrence: Date, call: { signal: AbortSignal }) => string | Promise<string>);
}

/** How `bot.cron` runs a job: its time zone, what to do about runs missed while down, and its id. */
export interface CronOptions {
  /** IANA time zone; default UTC. */
  timezone?: string;
  /** After downtime: `"skip"` missed runs (default) or `"run-once"` to catch up once. */
  missed?: "skip" | "run-once";
  /**
   * The name its last run is stored under; default the expression and time zone. Set it to keep
   * the history when you edit the schedule; set on a job that had none, the history under the
   * default key is read while the id has none.
   */
  id?: string;
}
