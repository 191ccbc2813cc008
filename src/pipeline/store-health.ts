/**
 * Whether the state store takes a bot's writes: failing from the first write its outage fails (a
 * Redis out of reach, the embedded store's disk full) until one lands. `/readyz`, the status and
 * `/metrics` read it, and an outage costs two log lines however long it lasts: one when it begins,
 * one when it ends (with how long, how many writes failed, and how many events were run again or
 * waited for the store meanwhile). Once it is said, the lines each event's tries would repeat
 * (its attempts run again, its wait for the store) go to debug, the first of each kind at warn: a
 * busy bot's outage is then a few warn lines, not a few per message. Made anew with the bot's
 * runtime (a reload): an outage still on is said again, its counts from zero.
 */
import type { Logger } from "pino";
import { isStoreOutage, type StateErrorCode } from "../state/state-error.ts";
import type { Clock } from "../time/clock.ts";

/** Logged (warn) when the store fails the first of the bot's reads or writes. */
export const STORE_FAILING_LINE =
  "the state store is failing the bot's reads or writes: each is tried again until the store answers (said once)";
/** Logged (info) when a read or write succeeds again. */
export const STORE_BACK_LINE = "the state store answers the bot again";

/** The store's outage as the status shows it. */
export interface StoreFailure {
  /** ISO 8601: when the first write failed. */
  since: string;
  /** The last failure's code: `STATE_UNAVAILABLE` (Redis) or `STATE_IO` (the embedded store's disk). */
  code: StateErrorCode;
  /** The last failure's message: the store's, which names no password. */
  error: string;
  /** Writes that failed since (each try counts). */
  failures: number;
}

/** The per-event lines an outage repeats: an event run again after a pause, an event waiting for the store. */
export type EventLine = "retried" | "waited";

export class StoreHealth {
  readonly #log: Logger;
  readonly #clock: Clock;
  #since: number | undefined;
  #code: StateErrorCode = "STATE_UNAVAILABLE";
  #error = "";
  #failures = 0;
  /** The kinds of per-event line said at warn during this outage (the rest at debug). */
  readonly #said = new Set<EventLine>();
  /** Events run again, and events that waited for the store, because of this outage. */
  #events = { retried: 0, waited: 0 };
  /** Every failed write since the bot was made, by code (a counter of `/metrics`). */
  readonly totals = new Map<StateErrorCode, number>();
  /** Events (cron occurrences too) whose every attempt failed, the last on the outage, since the bot was made. */
  waitedTotal = 0;

  constructor(log: Logger, clock: Clock) {
    this.#log = log;
    this.#clock = clock;
  }

  /** The store fails the bot's writes now. */
  get failing(): boolean {
    return this.#since !== undefined;
  }

  /**
   * A write failed with `err`: true when that is the store's outage (recorded, and logged when it
   * begins). A lost lease (`STATE_FENCED`) is no outage of the store (the bot moves to another
   * instance), nor is any other failure: false, nothing recorded.
   */
  failed(err: unknown): boolean {
    if (!isStoreOutage(err) || err.code === "STATE_FENCED") return false;
    [this.#code, this.#error] = [err.code, err.message];
    this.#failures++;
    this.totals.set(err.code, (this.totals.get(err.code) ?? 0) + 1);
    if (this.#since === undefined) {
      this.#since = this.#clock.now();
      this.#log.warn({ code: err.code, reason: err.message }, STORE_FAILING_LINE);
    }
    return true;
  }

  /**
   * {@link failed}, and true when `err` goes on with an outage already said: a line of its own for
   * each try would repeat that one (the caller logs it at debug).
   */
  repeats(err: unknown): boolean {
    const said = this.failing;
    return this.failed(err) && said;
  }

  /**
   * An event's run failed with `err` and is run again (`"retried"`), or waits for the store
   * (`"waited"`): when that is the outage under way, the event is counted (unless `counted`
   * already), and true is returned when its line goes to debug, one of that kind already said at
   * warn in this outage. False for any other failure (a lost lease's, the handler's own) or with
   * no outage on: its line stays at its level.
   */
  quiet(kind: EventLine, err: unknown, counted = false): boolean {
    if (!isStoreOutage(err) || err.code === "STATE_FENCED") return false;
    if (!counted && kind === "waited") this.waitedTotal++;
    if (this.#since === undefined) return false;
    if (!counted) this.#events[kind]++;
    if (!this.#said.has(kind)) {
      this.#said.add(kind);
      return false;
    }
    return true;
  }

  /** A write of the bot's landed: the outage, if there was one, is over. */
  landed(): void {
    if (this.#since === undefined) return;
    const failedForMs = this.#clock.now() - this.#since;
    const { retried, waited } = this.#events;
    this.#log.info(
      { failedForMs, failures: this.#failures, code: this.#code, retried, waited },
      STORE_BACK_LINE,
    );
    this.#clear();
  }

  /**
   * The bot starts again here (a lease moved back to this instance): an outage its last run met is
   * no longer known to be on, and nothing of that run may write to say it ended. Its first write
   * that fails says it anew.
   */
  restarted(): void {
    this.#clear();
  }

  #clear(): void {
    this.#since = undefined;
    this.#failures = 0;
    this.#said.clear();
    this.#events = { retried: 0, waited: 0 };
  }

  /** The outage under way; undefined while the store takes the bot's writes. */
  get failure(): StoreFailure | undefined {
    if (this.#since === undefined) return undefined;
    const since = new Date(this.#since).toISOString();
    return { since, code: this.#code, error: this.#error, failures: this.#failures };
  }
}
