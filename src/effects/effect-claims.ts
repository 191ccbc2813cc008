/**
 * An effect's claim (effect-records.ts): the pending record a run writes, in one atomic step,
 * before it makes an effect that can be looked for. Another run of the same event (two instances
 * on one store running one dialog's answer, as during a rolling deploy) finds it and waits for its
 * result instead of making the effect too. The run that holds a claim renews it while its effect
 * is under way (a send waiting for the account's budget can take minutes), so a claim is taken
 * for one a crash cut short only once it has gone {@link CLAIM_WAIT_MS} without a renewal.
 */
import { createHash } from "node:crypto";
import { sleep } from "../api/sleep.ts";
import { BothostError } from "../errors/bothost-error.ts";
import type { JsonValue, StateStore } from "../state/state-store.ts";
import type { Clock, TimerHandle } from "../time/clock.ts";

/**
 * How long a run waits on an effect another run claimed, from the claim's last renewal (by that
 * run's clock), before taking it for one a crash cut short: over three renewals, so a clock a few
 * seconds apart or a slow store write does not make a live claim look dead.
 */
export const CLAIM_WAIT_MS = 10_000;
/** How often a run renews the claim of an effect it is making. */
export const CLAIM_RENEW_MS = 3_000;
/** How often a waiting run reads the claimed effect's record. */
const CLAIM_POLL_MS = 200;

/** How {@link EffectRecords} makes one effect. */
export interface EffectSteps<T extends JsonValue> {
  /** Makes the effect; `target`: its claim's (see {@link target}). */
  act(target?: JsonValue): Promise<T>;
  /** The effect's result if the server shows it already happened (asked on a re-run; `pending`: its claim). */
  verify?(pending: EffectRecord): Promise<T | undefined>;
  /**
   * What the effect aims at (the id of the snippet a delete removes), resolved when it is claimed
   * and kept in its claim: a read-back looks for that one, not another that looks the same, and a
   * run that takes over a claim cut short aims where it aimed.
   */
  target?(): Promise<JsonValue>;
  /**
   * The effect's arguments as its read-back finds them made, hashed, kept as its claim's `args` (a
   * send's content as the server stores it: a read-back hashes the stored copy). A labelled
   * effect's are by default its `fp`.
   */
  args?(): string;
  /** Recorded and committed before its result is handed back: no `verify`, a re-run must find it. */
  durable?: boolean;
  /** The run's signal: a wait on another run's claim ends when it aborts. */
  signal?: AbortSignal;
}

/** What a run recorded for one effect. */
export interface EffectRecord {
  n: number;
  kind: string;
  result: JsonValue;
  /** What the effect was given, hashed (a send's target and text): a dialog's replay matches by it too. */
  fp?: string;
  /**
   * A pending effect's arguments as made, hashed (a labelled one's `fp` is the label): a read-back
   * looks for what was made (see {@link EffectSteps.args}).
   */
  args?: string;
  /** A labelled effect's claim: its label, the step whose read-back `args` serve. */
  label?: string;
  /** What a pending effect aims at (see {@link EffectSteps.target}). */
  target?: JsonValue;
  /** Begun, not known to be finished: the effect may have happened with its answer lost. */
  pending?: true;
  /** A pending record's claim: which run began the effect, and when it last said so (by its clock). */
  by?: string;
  at?: number;
  /** When a labelled effect (a dialog's question) was begun, by the clock: its deadline counts from then. */
  begun?: number;
}

/** What an effect was given (its target and text, say), hashed: a strict run matches it by this. */
export function printOf(args: unknown): string {
  return createHash("sha256").update(JSON.stringify(args)).digest("base64url").slice(0, 12);
}

/**
 * `claim` as a read-back of an effect labelled `label` (or of none) sees it: its `args` only if made
 * under that label (or under none).
 */
export function argsFor(claim: EffectRecord, label: string | undefined): EffectRecord {
  if (claim.args === undefined || claim.label === label) return claim;
  const { args: _, ...rest } = claim;
  return rest;
}

/** Runs one store write (or read) of an effect's records: a caller's policy for store failures. */
export type RecordWrite = <T>(write: () => Promise<T>) => Promise<T>;

/** Where claims are kept, and how they are timed. */
export interface ClaimStore {
  store: StateStore;
  ttlMs: number;
  /** Makes the store's writes survive a crash of this process: a claim must, before its effect. */
  commit?(): Promise<void>;
  /** Times claims; without it no claim is renewed or waited on. */
  clock?: Clock;
  /** When the bot's current start here began: a claim made (or renewed) before is a gone run's. */
  since?: () => number;
}

/** Effect `key`'s record `was` replaced by `now` (deleted if undefined), if it holds it still. */
export async function swapRecord(
  o: ClaimStore,
  key: string,
  was: EffectRecord,
  now: EffectRecord | undefined,
): Promise<void> {
  const text = JSON.stringify(was);
  const fn = (current: JsonValue | undefined) =>
    JSON.stringify(current) === text ? (now as unknown as JsonValue | undefined) : current;
  await o.store.applyWrites([{ op: "update", key, fn, ttlMs: o.ttlMs }]);
}

/**
 * Claim effect `key` for a run (`mine`, a pending record): resolves undefined when taken (the key
 * absent, holding `over`, or this very claim), else the record another run holds there.
 */
export async function claimRecord(
  o: ClaimStore,
  key: string,
  mine: EffectRecord,
  over: EffectRecord | undefined,
): Promise<EffectRecord | undefined> {
  const text = JSON.stringify(mine);
  const was = over && JSON.stringify(over);
  let held: EffectRecord | undefined;
  const fn = (current: JsonValue | undefined) => {
    const now = current === undefined ? undefined : JSON.stringify(current);
    held =
      now === undefined || now === text || now === was ? undefined : (current as unknown as EffectRecord);
    return held === undefined ? (mine as unknown as JsonValue) : current;
  };
  // Expected as read (most often absent): a networked store then makes the claim in one write.
  const expect = was ?? null;
  await o.store.applyWrites([{ op: "update", key, fn, ttlMs: o.ttlMs, expect }]);
  // Not committed (the disk full): withdrawn, its effect not begun, or the next attempt waits on it.
  if (held === undefined)
    await o.commit?.().catch(async (err: unknown) => {
      await swapRecord(o, key, mine, over).catch(() => {});
      throw err;
    });
  // Taken, its effect begun right after: only while the lease is still held here. A claim confirmed
  // after the lease ran out (a replica slow to confirm it, this process stalled before its lease
  // timer fired) may already be read back and made by the instance that took the bot over.
  if (held === undefined) o.store.checkFence?.();
  return held;
}

/**
 * `claim`, another run's pending record of effect `key`: its record as it is once finished (or
 * gone), or still pending once {@link CLAIM_WAIT_MS} passed since its last renewal (cut short by a
 * crash). A claim last renewed before `since` (a process that stopped, a crash, a stop of the bot
 * here) is not waited on: it is looked for at once.
 */
export async function awaitClaim(
  o: ClaimStore,
  key: string,
  claim: EffectRecord,
  write: RecordWrite,
  signal?: AbortSignal,
): Promise<EffectRecord | undefined> {
  const { clock, since } = o;
  let record: EffectRecord | undefined = claim;
  const fresh = (at: number | undefined) =>
    at !== undefined && at >= (since?.() ?? 0) && clock!.now() - at < CLAIM_WAIT_MS;
  while (clock && record?.pending && fresh(record.at)) {
    await sleep(clock, CLAIM_POLL_MS, signal);
    record = (await write(() => o.store.get(key))) as EffectRecord | undefined;
  }
  return record;
}

/**
 * A claim this run holds while it makes the effect: its time renewed every {@link CLAIM_RENEW_MS}
 * (not committed: a crash loses at most a renewal, which only lets a waiter look sooner).
 */
export class HeldClaim {
  readonly #o: ClaimStore;
  readonly #key: string;
  /** The claim as last written. */
  #current: EffectRecord;
  #timer: TimerHandle | undefined;
  /** A renewal's write under way: waited for before the claim is replaced. */
  #renewing: Promise<void> | undefined;

  constructor(o: ClaimStore, key: string, claim: EffectRecord) {
    this.#o = o;
    this.#key = key;
    this.#current = claim;
    this.#arm();
  }

  #arm(): void {
    this.#timer = this.#o.clock?.setTimeout(this.#renew, CLAIM_RENEW_MS);
  }

  readonly #renew = (): void => {
    const clock = this.#o.clock;
    if (clock === undefined || this.#timer === undefined) return;
    const was = this.#current;
    const now: EffectRecord = { ...was, at: clock.now() };
    this.#renewing = swapRecord(this.#o, this.#key, was, now).then(
      () => {
        this.#current = now;
      },
      () => {}, // the store failing: the next renewal tries again
    );
    this.#arm();
  };

  /** The effect is made (or failed): renewed no more, and no renewal's write in flight. */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) this.#o.clock?.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#renewing;
  }

  /** The effect failed: the claim replaced by `left`, a pending record no run holds (none: removed). */
  async leave(left: EffectRecord | undefined): Promise<void> {
    await this.stop();
    await swapRecord(this.#o, this.#key, this.#current, left);
  }
}

/** A strict run's effect at number `n` is of another kind than the one recorded there. */
export class EffectOrderChanged extends BothostError<"EFFECT_ORDER_CHANGED"> {
  override readonly name = "EffectOrderChanged";
  constructor(n: number, recorded: string, now: string) {
    super(
      "EFFECT_ORDER_CHANGED",
      recorded === now
        ? `effect ${n} (a ${now}) is made now with other arguments than were recorded: the code changed.`
        : `effect ${n} was a ${recorded} when it was recorded and is a ${now} now: the code changed.`,
    );
  }
}
