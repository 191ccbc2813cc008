/**
 * Effect records: each effect a handler makes is recorded under (event, the effect's number in
 * the run), so that when the handler runs again for the event (a retry, a dead-letter replay,
 * catch-up after a crash) an effect already made returns its recorded result instead of acting
 * twice. Handlers are assumed to make their effects in the same order each run; a re-run that
 * makes another kind of effect at a number ignores that record (with a warning).
 *
 * The first effect without a record may have happened with its answer lost: a re-run looks for it
 * first (`verify`) and makes it only when not found. Effects after it were never started.
 */
import type { Logger } from "pino";
import type { JsonValue, StateStore } from "../state/state-store.ts";

/** What a run recorded for one effect. */
export interface EffectRecord {
  n: number;
  kind: string;
  result: JsonValue;
}

export interface EffectSteps<T extends JsonValue> {
  act(): Promise<T>;
  /** The effect's result if the server shows it already happened (asked only on a re-run). */
  verify?(): Promise<T | undefined>;
}

export interface EffectRecordsOptions {
  /** How long records of an event are kept: longer than its retries (dead letters carry their own). */
  ttlMs: number;
  log?: Logger;
  /** Told how each verification came out. */
  onVerify?(outcome: "found" | "absent"): void;
}

/** One bot's effect records. */
export class EffectRecords {
  /** `store`: the bot's own namespace for records. */
  constructor(
    private readonly store: StateStore,
    private readonly options: EffectRecordsOptions,
  ) {}

  /**
   * The records of one run of a handler for the event `eventKey` (stable across runs: a message
   * id). `rerun`: the handler ran for this event before. `carried`: records kept in a dead letter.
   */
  run(eventKey: string, rerun: boolean, carried: readonly EffectRecord[] = []): EffectRun {
    return new EffectRun(this.store, this.options, eventKey, rerun, carried);
  }
}

/** The effects of one handler run, numbered in the order it makes them. */
export class EffectRun {
  readonly #carried: Map<number, EffectRecord>;
  readonly #made: EffectRecord[] = [];
  #next = 0;
  /** True until this re-run meets its first effect without a record (the one maybe in flight). */
  #unsure: boolean;

  constructor(
    private readonly store: StateStore,
    private readonly options: EffectRecordsOptions,
    private readonly eventKey: string,
    rerun: boolean,
    carried: readonly EffectRecord[],
  ) {
    this.#unsure = rerun;
    this.#carried = new Map(carried.map((r) => [r.n, r]));
  }

  /** Makes the effect `kind` once for this event: returns the recorded result if it was made. */
  async once<T extends JsonValue>(kind: string, steps: EffectSteps<T>): Promise<T> {
    const n = ++this.#next;
    const key = `${this.eventKey}#${n}`;
    const found =
      this.#unsure || this.#carried.size > 0
        ? (((await this.store.get(key)) as EffectRecord | undefined) ?? this.#carried.get(n))
        : undefined;
    if (found && found.kind === kind) {
      this.#made.push(found);
      return found.result as T;
    }
    if (found) {
      this.options.log?.warn(
        { event: this.eventKey, n, recorded: found.kind, now: kind },
        "a re-run made its effects in another order than before: this effect is made again",
      );
    }
    if (this.#unsure) {
      this.#unsure = false;
      const verified = await steps.verify?.();
      if (steps.verify) this.options.onVerify?.(verified === undefined ? "absent" : "found");
      if (verified !== undefined) return this.#record(key, { n, kind, result: verified });
    }
    return this.#record(key, { n, kind, result: await steps.act() });
  }

  /** The effects made (or found made) so far in this run, for a dead letter to carry. */
  get made(): readonly EffectRecord[] {
    return this.#made;
  }

  async #record<T extends JsonValue>(key: string, record: EffectRecord & { result: T }): Promise<T> {
    this.#made.push(record);
    await this.store.set(key, record as unknown as JsonValue, { ttlMs: this.options.ttlMs });
    return record.result;
  }
}
