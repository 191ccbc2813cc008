/**
 * The warning for events kept as unknown (they failed their schema), at most once a minute per
 * event type. A server whose events all differ from the schema in one field would otherwise
 * write a line for every event it sends: thousands a second in a busy organization.
 */
import type { Logger } from "../api/logger.ts";
import type { Clock } from "../time/clock.ts";

/** How long the next warning for an event type waits after one was written. */
export const UNKNOWN_EVENT_WARNING_MS = 60_000;

/** Types followed at once; past it the oldest is forgotten (types come from the server). */
const MAX_TYPES = 100;

export class UnknownEventWarnings {
  readonly #log: Logger;
  readonly #clock: Clock;
  /** Per event type: until when further warnings are only counted, and how many were. */
  readonly #quiet = new Map<string, { until: number; notWritten: number }>();

  constructor(log: Logger, clock: Clock) {
    this.#log = log;
    this.#clock = clock;
  }

  /** An event of `eventType` was kept as unknown because of `issue`. */
  note(eventType: string, issue: string): void {
    const now = this.#clock.now();
    const quiet = this.#quiet.get(eventType);
    if (quiet !== undefined && now < quiet.until) {
      quiet.notWritten++;
      return;
    }
    const notWritten = quiet?.notWritten ?? 0;
    this.#quiet.delete(eventType);
    if (this.#quiet.size >= MAX_TYPES) this.#quiet.delete(this.#quiet.keys().next().value as string);
    this.#quiet.set(eventType, { until: now + UNKNOWN_EVENT_WARNING_MS, notWritten: 0 });
    this.#log.warn(
      { eventType, issue, ...(notWritten > 0 ? { notWritten } : {}) },
      notWritten > 0
        ? `event kept as unknown (and ${notWritten} more of this type since the last warning)`
        : "event kept as unknown",
    );
  }
}
