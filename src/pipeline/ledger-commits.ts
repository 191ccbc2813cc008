import type { Logger } from "../api/logger.ts";
import { sleep } from "../api/sleep.ts";
import { type Clock, nextTurn } from "../time/clock.ts";
import type { MessageLedger } from "./delivery-ledger.ts";
import { outageOf } from "./handler-failures-outage.ts";
import { fenced } from "./stop-cut.ts";
import type { StoreHealth } from "./store-health.ts";

/**
 * Committing the ledger: every handled message is recorded durably before its conversation's
 * next message can do anything observable, so a crash (kill -9, a lost lease) never runs a
 * finished handler again. One commit covers every completion of the same turn of the event loop.
 */
export interface LedgerCommitOptions {
  log: Logger;
  /** Make the store's writes survive a crash of this process (the daemon's `commit`, else `flush`). */
  commit(): Promise<void>;
  /**
   * The store's synchronous commit, where it has one (a solo daemon's FileStore): the writes it
   * makes are durable when it returns true.
   */
  syncCommit: { ready(): boolean; commit(): boolean } | undefined;
  /**
   * Told of each save that fails on the store's outage, and of each that lands. While the outage
   * lasts, the ledger is saved again after pauses on `clock` (1 s doubling to 30 s): its marks land
   * as soon as the store is back, and the bot is known to be writing again, without waiting for a
   * message to handle.
   */
  health?: { store: StoreHealth; clock: Clock } | undefined;
}

/** Pauses before the ledger is saved again while the store fails: the last one repeats. */
const SAVE_AGAIN_MS = [1_000, 2_000, 4_000, 8_000, 15_000, 30_000];

/** The completions of this turn are committed synchronously at its end (see {@link LedgerCommits.finish}). */
const IN_TURN = Symbol("in-turn commit");

export class LedgerCommits {
  /** The ledger completions go to (a bot started again opens a new one: cluster failover). */
  readonly ledger: MessageLedger;
  readonly #o: LedgerCommitOptions;
  /**
   * The commit shared by every completion since the last one: a promise the conversations'
   * next messages wait for, or IN_TURN for a synchronous commit in a microtask.
   */
  #round: Promise<void> | typeof IN_TURN | undefined;
  /** A commit ran in a microtask of this turn of the event loop; cleared after the turn. */
  #committedInTurn = false;
  /** The last save failed (its error logged, the next ones' not until one lands). */
  #failing = false;
  /** A save again waits for its pause. */
  #again = false;
  /** The saves again tried since the last that landed. */
  #tries = 0;
  /** Aborted by {@link stop}: no save again is tried after it. */
  readonly #stopped = new AbortController();

  constructor(ledger: MessageLedger, options: LedgerCommitOptions) {
    this.ledger = ledger;
    this.#o = options;
  }

  /**
   * Record a completion; the commit must land before the conversation moves on, or a crash runs
   * a finished handler again (test/e2e/crash-restart.test.ts).
   *
   * The turn's first completions are committed synchronously in a microtask queued by the first
   * of them: the next message starts at once, but only its synchronous part runs before the
   * commit (what it awaits resumes later, and no I/O is processed until the turn ends). Returns
   * undefined then. Every later completion of the turn (handlers that return promises settle
   * one after another in microtasks), or every completion when the store cannot commit
   * synchronously (a network store, a FileStore compacting), waits for one commit after the
   * turn (`nextTurn`): the returned promise, which the conversation's next message waits for
   * (started at once, it could resume and reply within the turn, before that commit:
   * test/daemon/delivery-edges.test.ts). So a burst costs a commit per round of its
   * conversations, not one per concurrency slot.
   */
  finish(id: number): Promise<void> | undefined {
    this.ledger.finish(id);
    const round = this.#round;
    if (round !== undefined) return round === IN_TURN ? undefined : round;
    if (!this.#committedInTurn && this.#o.syncCommit?.ready()) {
      this.#round = IN_TURN;
      queueMicrotask(this.#commitInTurn);
      return undefined;
    }
    const hold = nextTurn().then(this.#commitRound);
    this.#round = hold;
    return hold;
  }

  /** A round of completions waited for the turn's end: its commit. */
  readonly #commitRound = (): Promise<void> | void => {
    this.#round = undefined;
    return this.#o.syncCommit?.ready() ? this.#commitInTurn() : this.#save();
  };

  readonly #commitInTurn = (): void => {
    this.#round = undefined;
    if (!this.#committedInTurn) {
      this.#committedInTurn = true;
      void nextTurn().then(this.#turnEnded);
    }
    // The store applies writes at the call (what syncCommit requires): save() has written its
    // keys once it returns, and its promise only reports.
    this.ledger.save().catch((err: unknown) => this.#failed(err));
    try {
      // ready() said it would be synchronous; if not, commit the usual way.
      if (this.#o.syncCommit?.commit()) this.#saved();
      else void this.#save();
    } catch (err) {
      this.#failed(err);
    }
  };

  readonly #turnEnded = (): void => {
    this.#committedInTurn = false;
  };

  async #save(): Promise<void> {
    try {
      await this.ledger.save();
      await this.#o.commit();
      this.#saved();
    } catch (err) {
      this.#failed(err);
    }
  }

  /**
   * Said once while saves fail (each completion saves: a line each would flood the log), and when
   * one lands. A save refused for a lost lease is no failure of the store: the lease's loss is said
   * once (cluster/lease-coordinator.ts), and the next holder catches those messages up.
   */
  #failed(err: unknown): void {
    if (!this.#failing) {
      const level = fenced(outageOf(err)) ? "debug" : "error";
      this.#o.log[level]({ err }, "could not record handled messages in the state store");
    }
    this.#failing = true;
    const health = this.#o.health;
    if (health?.store.failed(err)) this.#saveAgain(health.clock);
  }

  #saved(): void {
    if (this.#failing) this.#o.log.info({}, "handled messages are recorded in the state store again");
    this.#failing = false;
    this.#tries = 0;
    this.#o.health?.store.landed();
  }

  /** The ledger saved again after a pause (one pending at a time), until a save lands or {@link stop}. */
  #saveAgain(clock: Clock): void {
    if (this.#again) return;
    this.#again = true;
    const pause = SAVE_AGAIN_MS[Math.min(this.#tries++, SAVE_AGAIN_MS.length - 1)] as number;
    sleep(clock, pause, this.#stopped.signal).then(
      () => {
        this.#again = false;
        if (this.#failing) void this.#save();
      },
      () => {},
    );
  }

  /** The bot stops: no save is tried again (the stop's flush, or the next start, records the marks). */
  stop(): void {
    this.#stopped.abort();
  }
}
