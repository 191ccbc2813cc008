/**
 * Why the server could not send a booking. Its `scheduled_messages` `update` event says only
 * `failed: true`; the reason (`failure_message`) comes in the direct message the Notification Bot
 * sends the bot right after: "The message you scheduled for <time:…> was not sent because of the
 * following error:\n\n> {reason}\n\n[View scheduled messages](#scheduled)" (see
 * docs/internals/server-behaviour.md#scheduled-messages). The server writes it in the bot's
 * language: a note in another language is not read.
 *
 * Each failure the scheduler handled is remembered by the time it was booked for, until the note
 * for that time explains it (once: a second note for the same time explains nothing).
 */
import type { Logger } from "pino";

const NOTE =
  /^The message you scheduled for <time:([^>]+)> was not sent because of the following error:\n\n> ?(.*)/;
/** Failures kept waiting for their note; older ones are forgotten first. */
const MAX_WAITING = 64;

/** The occurrence a failed booking was for. */
export interface FailedOccurrence {
  announcement: string;
  occurrence: string;
}

export class FailureNotes {
  /** Failures not explained yet, by the UNIX time (seconds) they were booked for. */
  readonly #waiting = new Map<number, FailedOccurrence[]>();
  #count = 0;

  /** Whether `content` reads as the server's note on a failed scheduled message. */
  static isNote(content: string): boolean {
    return content.startsWith("The message you scheduled for <time:");
  }

  /** A booking for `timestamp` (seconds) failed; its note may come. */
  failed(timestamp: number, what: FailedOccurrence): void {
    if (this.#count >= MAX_WAITING) {
      const [oldest, list] = this.#waiting.entries().next().value!;
      list.shift();
      if (list.length === 0) this.#waiting.delete(oldest);
      this.#count--;
    }
    const list = this.#waiting.get(timestamp) ?? [];
    list.push(what);
    this.#waiting.set(timestamp, list);
    this.#count++;
  }

  /** Log the server's reason for the failure a note explains, if one waits for it. */
  explain(content: string, log: Pick<Logger, "warn">): void {
    const [, time = "", reason = ""] = NOTE.exec(content) ?? [];
    const timestamp = Math.floor(Date.parse(time) / 1000);
    const list = this.#waiting.get(timestamp);
    const what = list?.shift();
    if (what === undefined) return;
    if (list!.length === 0) this.#waiting.delete(timestamp);
    this.#count--;
    log.warn({ ...what, reason: reason.trim() }, "the server's reason the announcement was not sent");
  }
}
