/**
 * Effect records: each effect a handler makes is recorded under (event, the effect's number in
 * the run), so that when the handler runs again for the event (a retry, a dead-letter replay,
 * catch-up after a crash) an effect already made returns its recorded result instead of acting
 * twice. Handlers are assumed to make their effects in the same order each run; a re-run that
 * makes another kind of effect at a number ignores that record (with a warning).
 *
 * Before an effect that can be looked for (`verify`) is made, a pending record is written and
 * committed (it survives a kill -9); the result replaces it. So a re-run knows which effect may
 * have happened with its answer lost: one whose record is still pending. Only that one is looked
 * for on the server (a read-back, e.g. GET /messages for a send) and made only when not found. An
 * effect with no record at all was never begun and is made without a read-back: a message caught
 * up after a hung poll or a restart, whose handler never ran, costs no extra call.
 */
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import { BothostError } from "../errors/bothost-error.ts";
import type { JsonValue, StateStore } from "../state/state-store.ts";

/** What a run recorded for one effect. */
export interface EffectRecord {
  n: number;
  kind: string;
  result: JsonValue;
  /** What the effect was given, hashed (a send's target and text): a dialog's replay matches by it too. */
  fp?: string;
  /** Begun, not known to be finished: the effect may have happened with its answer lost. */
  pending?: true;
}

export interface EffectSteps<T extends JsonValue> {
  act(): Promise<T>;
  /** The effect's result if the server shows it already happened (asked only on a re-run). */
  verify?(): Promise<T | undefined>;
  /**
   * The record is committed before the result is handed back: an effect that cannot be looked
   * for (no `verify`) whose result a re-run after a crash must find (`ctx.external`).
   */
  durable?: boolean;
}

export interface EffectRecordsOptions {
  /** How long records of an event are kept: longer than its retries (dead letters carry their own). */
  ttlMs: number;
  log?: Logger;
  /** Told how each verification came out. */
  onVerify?(outcome: "found" | "absent"): void;
  /** Makes the store's writes survive a crash of this process: a pending record must, before its effect. */
  commit?(): Promise<void>;
}

/** Runs one store write (or read) of an effect's records: a caller's policy for store failures. */
export type RecordWrite = <T>(write: () => Promise<T>) => Promise<T>;

const ONCE: RecordWrite = (write) => write();

/** What an effect was given (its target and text, say), hashed: a strict run matches it by this. */
export function printOf(args: unknown): string {
  return createHash("sha256").update(JSON.stringify(args)).digest("base64url").slice(0, 12);
}

/** A strict run's effect at number `n` is of another kind than the one recorded there. */
export class EffectOrderChanged extends BothostError<"EFFECT_ORDER_CHANGED"> {
  override readonly name = "EffectOrderChanged";
  constructor(n: number, recorded: string, now: string) {
    super(
      "EFFECT_ORDER_CHANGED",
      recorded === now
        ? `effect ${n} (a ${now}) was made with other arguments when it was recorded: the code changed.`
        : `effect ${n} was a ${recorded} when it was recorded and is a ${now} now: the code changed.`,
    );
  }
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
   * id). `rerun`: the handler may have run for this event before, so its records are read (a
   * first run skips the reads). `carried`: records kept in a dead letter or a dialog. `strict`: an
   * effect of another kind at a recorded number throws {@link EffectOrderChanged} (a dialog's
   * replay must match its record) instead of being made again.
   */
  run(eventKey: string, rerun: boolean, carried: readonly EffectRecord[] = [], strict = false): EffectRun {
    return new EffectRun(this.store, this.options, eventKey, rerun, carried, strict);
  }
}

const NONE_MADE: readonly EffectRecord[] = Object.freeze([]);

/** The effects of one handler run, numbered in the order it makes them. */
export class EffectRun {
  /** Undefined when nothing is carried (most runs: no allocation). */
  readonly #carried: Map<number, EffectRecord> | undefined;
  /** Made on the first effect (most runs make none). */
  #made: EffectRecord[] | undefined;
  #next = 0;
  /** Whether records are read before each effect (a re-run, or records carried by a letter). */
  readonly #lookUp: boolean;
  /** The fingerprint the next effect is matched by, in place of its own (see {@link label}). */
  #label: string | undefined;
  /** How the next effect's record writes are made (see {@link label}). */
  #write: RecordWrite = ONCE;
  /** The numbers of the effects found made by an earlier run (their records read from the store). */
  #earlier: Set<number> | undefined;

  constructor(
    private readonly store: StateStore,
    private readonly options: EffectRecordsOptions,
    /** The run's event (or job occurrence), the same for every run of it. */
    readonly eventKey: string,
    rerun: boolean,
    carried: readonly EffectRecord[],
    private readonly strict = false,
  ) {
    this.#carried = carried.length > 0 ? new Map(carried.map((r) => [r.n, r])) : undefined;
    this.#lookUp = rerun || this.#carried !== undefined;
  }

  /**
   * The next effect is matched by `fp` instead of its arguments (a dialog's question is its step,
   * whatever its wording). `write`: how its record's reads and writes are made (a dialog's
   * question tries them again through a store outage: the send itself is never made again).
   */
  label(fp: string, write: RecordWrite = ONCE): void {
    this.#label = fp;
    this.#write = write;
  }

  /**
   * Makes the effect `kind` once for this event: returns the recorded result if it was made.
   * `fp`: its arguments, hashed, for a strict run to match.
   */
  async once<T extends JsonValue>(kind: string, steps: EffectSteps<T>, fp?: string): Promise<T> {
    const n = ++this.#next;
    const key = `${this.eventKey}#${n}`;
    const print = this.#label ?? fp;
    const write = this.#write;
    this.#label = undefined;
    this.#write = ONCE;
    // A record carried finished (a dialog's log) is the answer: no read.
    const carried = this.#carried?.get(n);
    let found =
      carried !== undefined && !carried.pending
        ? carried
        : this.#lookUp
          ? (((await write(() => this.store.get(key))) as EffectRecord | undefined) ?? carried)
          : undefined;
    const differs =
      found !== undefined &&
      (found.kind !== kind || (this.strict && found.fp !== undefined && found.fp !== print));
    if (found && differs) {
      if (this.strict) throw new EffectOrderChanged(n, found.kind, kind);
      this.options.log?.warn(
        { event: this.eventKey, n, recorded: found.kind, now: kind },
        "a re-run made its effects in another order than before: this effect is made again",
      );
      found = undefined;
    }
    if (found && !found.pending) {
      if (found !== carried) this.#earlier = (this.#earlier ?? new Set()).add(n);
      this.#list().push(found);
      return found.result as T;
    }
    const made = (result: T): EffectRecord & { result: T } =>
      print === undefined ? { n, kind, result } : { n, kind, result, fp: print };
    if (!steps.verify) {
      const result = await this.#record(key, made(await steps.act()), this.#list().length, write);
      if (steps.durable) await write(async () => this.options.commit?.());
      return result;
    }
    if (found?.pending) {
      // Begun by an earlier run and never finished: it may have happened.
      const verified = await steps.verify();
      this.options.onVerify?.(verified === undefined ? "absent" : "found");
      if (verified !== undefined) return this.#record(key, made(verified), this.#list().length, write);
    }
    const pending: EffectRecord = { n, kind, result: null, pending: true };
    const at = this.#list().push(pending) - 1;
    let tried = false;
    const meanwhile = await write(async () => {
      // Tried again (a store outage, a lease lost and won back): what was read above may be
      // stale by now, and another run may have made the effect since. Then it is not made again.
      const now = tried ? ((await this.store.get(key)) as EffectRecord | undefined) : undefined;
      tried = true;
      if (now !== undefined && !now.pending && now.kind === kind) return now;
      await this.store.set(key, pending as unknown as JsonValue, { ttlMs: this.options.ttlMs });
      await this.options.commit?.();
      return undefined;
    });
    if (meanwhile !== undefined) return this.#madeMeanwhile(meanwhile, kind, print, at);
    return this.#record(key, made(await steps.act()), at, write);
  }

  /** `found`, the effect's record another run finished while this one waited to begin it. */
  #madeMeanwhile<T>(found: EffectRecord, kind: string, print: string | undefined, at: number): T {
    if (this.strict && found.fp !== undefined && found.fp !== print)
      throw new EffectOrderChanged(found.n, found.kind, kind);
    this.#earlier = (this.#earlier ?? new Set()).add(found.n);
    this.#list()[at] = found;
    return found.result as T;
  }

  /**
   * The result of the next effect an earlier run finished (of `kind`), taken as made, with the
   * begun ones before it (each superseded by it: a step that failed, then one made after it);
   * undefined, and nothing taken, when there is none. Reads nothing on a first run.
   */
  async replayed(kind: string): Promise<JsonValue | undefined> {
    if (!this.#lookUp) return undefined;
    const begun: EffectRecord[] = [];
    for (let n = this.#next + 1; ; n++) {
      const carried = this.#carried?.get(n);
      const record =
        carried !== undefined && !carried.pending
          ? carried
          : (((await this.store.get(`${this.eventKey}#${n}`)) as EffectRecord | undefined) ?? carried);
      if (record === undefined || record.kind !== kind) return undefined;
      begun.push(record);
      if (record.pending) continue;
      this.#next = n;
      this.#list().push(...begun);
      return record.result;
    }
  }

  /**
   * The effects made (or found made) so far in this run, for a dead letter to carry; one whose
   * answer never came stays pending, so the letter's replay looks for it.
   */
  get made(): readonly EffectRecord[] {
    return this.#made ?? NONE_MADE;
  }

  /**
   * Whether the `n`th effect (1 for the first) was found made by an earlier run whose record
   * survived it (a crash after the effect, before what came next), not made by this one.
   */
  madeEarlier(n: number): boolean {
    return this.#earlier?.has(n) ?? false;
  }

  /**
   * A run of its own for the later steps of one effect (a progress message's edits), numbered
   * apart from this run's: however many steps it makes, this run's numbering stays as it was.
   * Its records are looked up whenever this run's are.
   */
  nested(name: string): EffectRun {
    return new EffectRun(this.store, this.options, `${this.eventKey}/${name}`, this.#lookUp, []);
  }

  #list(): EffectRecord[] {
    this.#made ??= [];
    return this.#made;
  }

  /** Stores the finished record; `at`: its place in {@link made} (where its pending record was). */
  async #record<T extends JsonValue>(
    key: string,
    record: EffectRecord & { result: T },
    at: number,
    write: RecordWrite,
  ): Promise<T> {
    this.#list()[at] = record;
    await write(() => this.store.set(key, record as unknown as JsonValue, { ttlMs: this.options.ttlMs }));
    return record.result;
  }
}
