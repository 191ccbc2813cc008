/**
 * Crash points for tests that kill a real process at a chosen moment, not a random one.
 * `BOTHOST_FAILPOINTS=question-logged@2` makes the process SIGKILL itself the second time it
 * reaches that point (`@1` when no count is given). Unset (always, outside such tests), a point
 * costs one lookup in an empty set. Points: see {@link Failpoint}.
 */

/** Where a test can have the process killed. */
export type Failpoint =
  /**
   * An answer's (or deadline's, or a deleted question's) append landed; its message not yet
   * marked handled, the dialog not run.
   */
  | "answer-logged"
  /** A dialog's question was sent to the server; its append to the log not yet made. */
  | "question-sent"
  /** A dialog's question append landed; the run's message not yet marked handled. */
  | "question-logged"
  /** A move of a dialog's question was appended; the new conversation's messages still held. */
  | "move-logged"
  /** A message's handler failed an attempt, its count kept; the pause before the next not begun. */
  | "attempt-failed"
  /** A handler's last attempt failed (or the first, when it is not retried); its dead letter not yet kept. */
  | "attempts-ran-out"
  /** A failed run's dead letter (one the stop cut too) was written and committed; its message not yet marked handled. */
  | "letter-kept"
  /**
   * A `ctx.external` call's result is in hand (recorded and committed, in a run with effect
   * records), not yet handed back to the handler.
   */
  | "external-made"
  /**
   * An ended dialog's note was marked `sending` in its header (committed); its send not yet made.
   */
  | "note-marked"
  /** A progress's message was posted; its step's record (the result) not yet written. */
  | "progress-posted"
  /** An outgoing webhook's delivery is about to be answered (its `onSend`); the answer not yet written. */
  | "answer-sending"
  /** A `ctx.schedule.at` booking was made on the server, its answer read; its record not yet written. */
  | "schedule-booked"
  /** A recurring announcement's booking was made on the server; its id not yet in its record. */
  | "booking-posted"
  /** An announcement's booking was recorded as sent (or cancelled); the next not yet booked. */
  | "booking-settled"
  /** A changed announcement's old booking was deleted on the server; the new one not yet booked. */
  | "booking-replaced"
  /** A booking's topic or content was updated on the server; its record not yet written. */
  | "booking-edited"
  /** A `ctx.report` call was answered by the server; its claim still says `sending`. */
  | "report-made"
  /** A `ctx.snippets` change (create, ensure, update, delete) was answered; its record not yet written. */
  | "snippet-saved"
  /** A message a handler sent was answered by the server (its id in hand); the send's record not yet written. */
  | "message-sent"
  /**
   * An inbound webhook's handler returned and its `ctx.state` writes were applied; the request's
   * handled mark not yet written.
   */
  | "webhook-ran";

const armed = new Map<string, number>();
for (const spec of (process.env.BOTHOST_FAILPOINTS ?? "").split(",")) {
  const [name, count] = spec.trim().split("@");
  if (name) armed.set(name, Number(count ?? 1) || 1);
}

/** Kill this process here when a test armed `point` and this is the time it named. */
export function failpoint(point: Failpoint): void {
  if (armed.size === 0) return;
  const left = armed.get(point);
  if (left === undefined) return;
  if (left > 1) armed.set(point, left - 1);
  else process.kill(process.pid, "SIGKILL");
}
