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
 * effect with no record was never begun, or the server refused it outright (a JSON 4xx): made with
 * no read-back. A message caught up after a hung poll or a restart costs no extra call, and a send
 * refused (a channel that does not exist) is refused again for that reason, not its read-back's.
 *
 * The pending record is a claim, taken in one atomic step: two runs of one event at once (two
 * instances on one store running the same dialog's answer, as during a rolling deploy) cannot
 * both begin the effect. The other run waits for the claim's record to be finished and takes its
 * result; a claim not renewed for {@link CLAIM_WAIT_MS} (effect-claims.ts), or made before the
 * bot's current start here (`since`), is one a crash or a stop cut short, looked for.
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { JsonValue, StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import {
  argsFor,
  awaitClaim,
  type ClaimStore,
  claimRecord,
  EffectOrderChanged,
  type EffectRecord,
  type EffectSteps,
  HeldClaim,
  type RecordWrite,
} from "./effect-claims.ts";
import { isRefusal } from "./local-echo.ts";
import { carriedFor, letterRecords } from "./nested-records.ts";

export { CLAIM_WAIT_MS, EffectOrderChanged, type EffectRecord, type RecordWrite } from "./effect-claims.ts";
export { EFFECT_RECORDS_MARGIN_MS, EFFECT_RECORDS_MIN_TTL_MS, SERVER_CLOCK_SLACK_S } from "./record-times.ts";

export interface EffectRecordsOptions {
  /** How long records of an event are kept: longer than its retries (dead letters carry their own). */
  ttlMs: number;
  log?: Logger;
  /** Told how each verification came out. */
  onVerify?(outcome: "found" | "absent"): void;
  /** Makes the store's writes survive a crash of this process: a pending record must, before its effect. */
  commit?(): Promise<void>;
  /** Times claims, and paces a wait on another run's; without it a claim found is taken as cut short. */
  clock?: Clock;
  /** When the bot's current start here began (by `clock`): a claim made before is not waited on. */
  since?: () => number;
}

const ONCE: RecordWrite = (write) => write();

/** One bot's effect records, in `store` (the bot's own namespace for them). */
export class EffectRecords {
  private readonly options: EffectRecordsOptions;

  constructor(
    private readonly store: StateStore,
    options: EffectRecordsOptions,
  ) {
    // By default, a claim older than these records is a process's that stopped (a crash).
    const opened = options.clock?.now() ?? 0;
    this.options = { since: () => opened, ...options };
  }

  /** These records, kept `ttlMs` (an inbound webhook's idempotency window) instead. */
  keptFor(ttlMs: number): EffectRecords {
    return new EffectRecords(this.store, { ...this.options, ttlMs });
  }

  /**
   * When the runs of the event `eventKey` first began (epoch ms): `nowMs` for its first run, kept
   * with its records (as long, and committed with the first effect's) for every run after it, on
   * this process or another one (an inbound webhook request retried by its sender after a restart).
   */
  async firstBegun(eventKey: string, nowMs: number): Promise<number> {
    const key = `${eventKey}@begun`;
    if (await this.store.setIfAbsent(key, nowMs, { ttlMs: this.options.ttlMs })) return nowMs;
    const kept = await this.store.get(key);
    return typeof kept === "number" ? kept : nowMs;
  }

  /** `eventKey`'s records numbered after `from`, up to the first number with none (a run past its log). */
  async after(eventKey: string, from: number): Promise<EffectRecord[]> {
    const found: EffectRecord[] = [];
    for (let n = from + 1; ; n++) {
      const record = (await this.store.get(`${eventKey}#${n}`)) as EffectRecord | undefined;
      if (record === undefined) return found;
      found.push(record);
    }
  }

  /**
   * The records of one run of a handler for the event `eventKey` (stable across runs: a message id). `rerun`:
   * the handler may have run for this event before, so its records are read (a first run skips the reads).
   * `carried`: records kept in a dead letter or a dialog. `strict`: an effect of another kind at a recorded
   * number throws {@link EffectOrderChanged} (a dialog's replay must match its record) instead of being made
   * again. `before`: what each effect waits for first, if anything (a job's mark; told if it is labelled).
   */
  run(
    eventKey: string,
    rerun: boolean,
    carried: readonly EffectRecord[] = [],
    strict = false,
    before?: (labelled: boolean) => Promise<void> | undefined,
  ): EffectRun {
    return new EffectRun(this.store, this.options, eventKey, rerun, carried, strict, before);
  }
}

const NONE_MADE: readonly EffectRecord[] = Object.freeze([]);

/** The effects of one handler run, numbered in the order it makes them. */
export class EffectRun {
  /** Undefined when nothing is carried (most runs: no allocation). */
  readonly #carried: Map<number, EffectRecord> | undefined;
  /** Made on the first effect (most runs make none); a hole where an effect was refused. */
  #made: (EffectRecord | undefined)[] | undefined;
  #next = 0;
  /** Whether records are read before each effect (a re-run, or records carried by a letter). */
  readonly #lookUp: boolean;
  /** The fingerprint the next effect is matched by, in place of its own (see {@link label}). */
  #label: string | undefined;
  /** How the next effect's record writes are made (see {@link label}). */
  #write: RecordWrite = ONCE;
  #stamp = false;
  /** The numbers of the effects found made by an earlier run (their records read from the store). */
  #earlier: Set<number> | undefined;
  /** The runs nested in this one, by name (see {@link nested}). */
  #nested: Map<string, EffectRun> | undefined;
  #claimStore: ClaimStore | undefined;
  #leftBegun = false;

  constructor(
    private readonly store: StateStore,
    private readonly options: EffectRecordsOptions,
    /** The run's event (or job occurrence), the same for every run of it. */
    readonly eventKey: string,
    rerun: boolean,
    carried: readonly EffectRecord[],
    private readonly strict = false,
    private readonly before?: (labelled: boolean) => Promise<void> | undefined,
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

  /** The next effect keeps when it was begun, as a labelled one (a refusal asking a question again). */
  stamp(): void {
    this.#stamp = true;
  }

  /** Makes effect `kind` once for this event (the recorded result if made); `fp`: its arguments, hashed. */
  async once<T extends JsonValue>(kind: string, steps: EffectSteps<T>, fp?: string): Promise<T> {
    const n = ++this.#next;
    const key = `${this.eventKey}#${n}`;
    const print = this.#label ?? fp;
    // A labelled (a dialog's question) or stamped effect (a refusal asking it again) keeps when it was
    // begun: a later run finding it made (a crash before its log) counts the deadline from then. A
    // claim keeps what its effect was given (a labelled one, its label too): a read-back finds it
    // made, however the run again words it (the code reworded, a template naming a moved topic).
    const label = this.#label;
    const args = fp === undefined ? undefined : label === undefined ? steps.args?.() : (steps.args?.() ?? fp);
    const given = args === undefined ? {} : { args, ...(label !== undefined && { label }) };
    const begun = label === undefined && !this.#stamp ? undefined : this.options.clock?.now();
    const write = this.#write;
    this.#label = undefined;
    this.#stamp = false;
    this.#write = ONCE;
    // Numbered first, in the order the handler made its effects, then waited (not at all, mostly).
    const first = this.before?.(label !== undefined);
    if (first !== undefined) await first;
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
    // The record this run's claim may replace: another kind's (made again), or a pending one.
    let over = found;
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
    const made = (result: T, at = begun): EffectRecord & { result: T } => ({
      n,
      kind,
      result,
      ...(print !== undefined && { fp: print }),
      ...(at !== undefined && { begun: at }),
    });
    if (!steps.verify) {
      const result = await this.#record(key, made(await steps.act()), this.#list().length, write);
      if (steps.durable) await write(async () => this.options.commit?.());
      return result;
    }
    const clock = this.options.clock;
    const by = randomBytes(6).toString("base64url");
    const pending: EffectRecord = { n, kind, result: null, pending: true, by, ...given };
    if (clock) pending.at = clock.now();
    const at = this.#list().push(pending) - 1;
    for (;;) {
      if (over?.pending) {
        // Begun by another run and never finished: made by it now (waited for), or cut short by a
        // crash, when it may have happened: looked for.
        over = await awaitClaim(this.#claims(), key, over, write, steps.signal);
        if (over?.pending) {
          // Its words count only for the same step: another question, or another send, is not it.
          const verified = await steps.verify(argsFor(over, label));
          this.options.onVerify?.(verified === undefined ? "absent" : "found");
          if (verified !== undefined) {
            this.#earlier = (this.#earlier ?? new Set()).add(n); // made earlier, as if its record survived
            // Begun by a run cut short (its record says when), or that died (when its claim last said so).
            const then = begun === undefined ? undefined : (over.begun ?? over.at);
            return this.#record(key, made(verified, then), at, write);
          }
        }
      }
      // Finished by another run meanwhile (not one of another kind, which is made again).
      if (over !== undefined && !over.pending && over.kind === kind)
        return this.#madeMeanwhile(over, kind, print, at);
      // Aimed where a run cut short aimed (its read-back found it not made), else at what is there now.
      if (steps.target) {
        const kept = over?.pending && over.kind === kind ? over.target : undefined;
        pending.target = kept !== undefined ? kept : await steps.target();
      }
      // Claimed (a retry after a store outage finds its own claim made, or another run's record).
      const held = await write(() => claimRecord(this.#claims(), key, pending, over));
      if (held === undefined) break;
      over = held;
    }
    // Renewed while the effect is under way: another run waits on it as long as it takes.
    const claim = new HeldClaim(this.#claims(), key, pending);
    let result: T;
    try {
      result = await steps.act(pending.target);
    } catch (err) {
      // Ended here, maybe made (its answer lost): no run waits on it (no `at`), one looks for it. Refused
      // outright, it was not made: no record, and none of this run's effects (nor carried for it).
      const left: EffectRecord = { n, kind, result: null, pending: true, ...given, ...(begun && { begun }) };
      if (pending.target !== undefined) left.target = pending.target;
      const kept = isRefusal(err) ? undefined : left;
      if (kept === undefined) this.#carried?.delete(n);
      this.#list()[at] = kept;
      await claim.leave(kept).catch(() => {});
      throw err;
    }
    await claim.stop();
    return this.#record(key, made(result), at, write);
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
      if (record === undefined || record.kind !== kind) {
        this.#leftBegun = begun.length > 0;
        return undefined;
      }
      begun.push(record);
      if (record.pending) continue;
      this.#next = n;
      this.#list().push(...begun);
      return record.result;
    }
  }

  /**
   * Whether the last {@link replayed} that found none stopped at effects an earlier run began and
   * never finished (made maybe, its answer lost): the next effect takes the first one's number,
   * and one not looked for (no `verify`) replaces its record, so the caller keeps the doubt.
   */
  get leftBegun(): boolean {
    return this.#leftBegun;
  }

  /** The number of the effect last begun: inside {@link once}, the one being made. */
  get current(): number {
    return this.#next;
  }

  /** The effects made (or found made) so far in this run: pending if the answer never came; none refused. */
  get made(): readonly EffectRecord[] {
    const made = this.#made;
    if (made === undefined) return NONE_MADE;
    return made.includes(undefined) ? made.filter((r) => r !== undefined) : (made as EffectRecord[]);
  }

  /** What a dead letter carries (see {@link letterRecords}). */
  get kept(): readonly EffectRecord[] {
    return letterRecords(this.made, this.#carried, this.#nested) as readonly EffectRecord[];
  }

  /**
   * Whether the `n`th effect (1 for the first) was found made by an earlier run, not by this one: its record
   * survived the crash, or the crash left it pending and it was looked for and found.
   */
  madeEarlier(n: number): boolean {
    return this.#earlier?.has(n) ?? false;
  }

  /**
   * A run of its own for the later steps of one effect (a progress message's edits), numbered
   * apart from this run's: however many steps it makes, this run's numbering stays as it was.
   * Its records are looked up whenever this run's are, and carried with this run's.
   */
  nested(name: string): EffectRun {
    const carried = carriedFor(this.#carried?.get(0), name);
    const key = `${this.eventKey}/${name}`;
    const run = new EffectRun(this.store, this.options, key, this.#lookUp, carried, false, this.before);
    this.#nested ??= new Map();
    this.#nested.set(name, run);
    return run;
  }

  /** What each run nested in this one made or found made so far, by its name (see {@link nested}). */
  get nestedMade(): ReadonlyMap<string, readonly EffectRecord[]> {
    return new Map([...(this.#nested ?? [])].map(([name, run]) => [name, run.made]));
  }

  /** The next effect's number goes to one whose result is kept elsewhere (a dialog's log): nothing is read. */
  skip(): void {
    this.#next++;
  }

  /** Where this run's claims are written and how they are timed. */
  #claims(): ClaimStore {
    this.#claimStore ??= { store: this.store, ...this.options };
    return this.#claimStore;
  }

  #list(): (EffectRecord | undefined)[] {
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
