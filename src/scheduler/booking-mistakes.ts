/**
 * An announcement that cannot be booked as it is given: its snippet missing, its channel unknown,
 * its content over the server's limit (a refusal: pipeline/handler-failures-refusals.ts). That is
 * the operator's to fix, not an outage: said at warn, without a stack, once per announcement and
 * reason until it is booked again, and tried again on the slow end of the backoff (every 30
 * minutes), not every minute.
 */
import type { Logger } from "pino";
import { refusalOf } from "../pipeline/handler-failures-refusals.ts";

export class BookingMistakes {
  /** Each reason said, and of which announcement (undefined: a step not tied to one). */
  readonly #said = new Map<string, string | undefined>();

  /**
   * True when `err` is such a mistake: said once (`{announcement, code, reason}`), then at debug
   * while it lasts. False for any other failure, which the caller logs itself.
   */
  said(log: Logger, id: string | undefined, err: unknown): boolean {
    const refusal = refusalOf(err);
    if (refusal === undefined) return false;
    const line = {
      ...(id !== undefined ? { announcement: id } : {}),
      code: refusal.code,
      reason: refusal.reason,
    };
    // The bot's own reason may name the announcement already (`announcement "rules": …`).
    const reason = id === undefined ? refusal.reason : refusal.reason.replace(`announcement "${id}": `, "");
    const what =
      id === undefined ? "an announcement cannot be booked" : `announcement "${id}" cannot be booked`;
    const msg = `${what}: ${reason.replace(/[.;]?$/, ".")} Tried again every 30 minutes, and at each start.`;
    if (this.#said.has(refusal.reason)) log.debug(line, msg);
    else log.warn(line, msg);
    // Under the announcement's id once known: an event's step (no id) and the retry's reconcile say it once.
    if (id !== undefined || !this.#said.has(refusal.reason)) this.#said.set(refusal.reason, id);
    return true;
  }

  /** `id` was booked (or reconciled) without a mistake: a mistake of it is said again. */
  cleared(id: string): void {
    for (const [reason, of] of this.#said) if (of === id) this.#said.delete(reason);
  }

  /** A reconcile of every announcement met no mistake: each is said again. */
  clear(): void {
    this.#said.clear();
  }
}
