/**
 * Effect records: each effect a handler makes (a message sent, a reaction, a report…) is recorded
 * in the state store under (event, the effect's number in the run), so that when the handler runs
 * again for the same event (an automatic retry, a replay from dead letters, a restart after a
 * crash mid-handler) an effect already made returns its recorded result instead of acting twice.
 *
 * This assumes a handler makes its effects in the same order each time it runs for an event. When
 * a re-run makes a different kind of effect at a number than the record says, the record is
 * ignored (with a warning), the new effect is made and recorded in its place.
 *
 * An effect is marked pending (and the mark committed) before it acts and done after. A pending
 * mark found by a re-run means the process died or the call failed in between: whether the server
 * acted is unknown, so the effect's `verify` looks (a message sent is found by reading back), and
 * the effect acts again only when verify finds nothing. An effect without `verify` acts again.
 */
import type { Logger } from "pino";
import type { JsonValue, StateStore } from "../state/state-store.ts";

/** What a run recorded for one effect. */
export interface EffectRecord {
  n: number;
  kind: string;
  /** Absent while pending. */
  result?: JsonValue;
}

export interface EffectSteps<T extends JsonValue> {
  act(): Promise<T>;
  /** After a crash or an ambiguous failure: the effect's result if the server shows it happened. */
  verify?(): Promise<T | undefined>;
}

export interface EffectRecordsOptions {
  /** How long records are kept: longer than any retry sequence and restart (dead letters keep their own). */
  ttlMs: number;
  /** Makes the pending mark survive a crash before the effect acts (the store's commit). */
  commit(): Promise<void>;
  log?: Logger;
}

/** One bot's effect records. */
export class EffectRecords {
  readonly #store: StateStore;
  readonly #o: EffectRecordsOptions;

  /** `store`: the bot's own namespace for records. */
  constructor(store: StateStore, options: EffectRecordsOptions) {
    this.#store = store;
    this.#o = options;
  }

  /**
   * The records of one run of a handler for the event `eventKey` (stable across re-runs: a message
   * id, a job and its time). `carried`: records kept in a dead letter, for a replay made after the
   * store's own records expired.
   */
  run(eventKey: string, carried: readonly EffectRecord[] = []): EffectRun {
    return new EffectRun(this.#store, this.#o, eventKey, carried);
  }
}

/** The effects of one handler run, numbered in the order it makes them. */
export class EffectRun {
  readonly eventKey: string;
  readonly #store: StateStore;
  readonly #o: EffectRecordsOptions;
  readonly #carried: Map<number, EffectRecord>;
  readonly #made: EffectRecord[] = [];
  #next = 0;

  constructor(
    store: StateStore,
    options: EffectRecordsOptions,
    eventKey: string,
    carried: readonly EffectRecord[],
  ) {
    this.#store = store;
    this.#o = options;
    this.eventKey = eventKey;
    this.#carried = new Map(carried.map((r) => [r.n, r]));
  }

  /** Makes the effect `kind` once for this event: returns the recorded result if it was made. */
  async once<T extends JsonValue>(kind: string, steps: EffectSteps<T>): Promise<T> {
    const n = ++this.#next;
    const key = `${this.eventKey}#${n}`;
    const found = ((await this.#store.get(key)) as EffectRecord | undefined) ?? this.#carried.get(n);
    if (found && found.kind !== kind) {
      this.#o.log?.warn(
        { event: this.eventKey, n, recorded: found.kind, now: kind },
        "a re-run made its effects in another order than before: this effect is made again",
      );
    } else if (found?.result !== undefined) {
      this.#made.push(found);
      return found.result as T;
    } else if (found && steps.verify) {
      const verified = await steps.verify();
      if (verified !== undefined) return this.#done(key, { n, kind, result: verified });
    }
    const ttl = { ttlMs: this.#o.ttlMs };
    await this.#store.set(key, { n, kind }, ttl);
    await this.#o.commit();
    const result = await steps.act();
    return this.#done(key, { n, kind, result });
  }

  /** The effects made (or found made) so far in this run, for a dead letter to carry. */
  get made(): readonly EffectRecord[] {
    return this.#made;
  }

  async #done<T extends JsonValue>(key: string, record: EffectRecord & { result: T }): Promise<T> {
    await this.#store.set(key, record as unknown as JsonValue, { ttlMs: this.#o.ttlMs });
    this.#made.push(record);
    return record.result;
  }
}
