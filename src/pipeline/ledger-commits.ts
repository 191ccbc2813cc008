/**
 * Committing the delivery ledger: every handled message is recorded durably before its
 * conversation's next message can do anything observable, so a crash (kill -9, a lost lease)
 * never runs a finished handler again. One commit covers every completion of the same turn of
 * the event loop.
 */
import type { Logger } from "../api/logger.ts";
import type { DeliveryLedger } from "./delivery-ledger.ts";

export interface LedgerCommitOptions {
  log: Logger;
  /** Make the store's writes durable against a machine crash. */
  flush(): Promise<void>;
  /** Make the store's writes survive a crash of this process (cheaper than `flush`); default `flush`. */
  commit?(): Promise<void>;
  /** The store's synchronous commit, where it has one (see `BotRuntimeOptions.syncCommit`). */
  syncCommit?: { ready(): boolean; commit(): boolean };
}

/** The completions of this turn are committed synchronously at its end (see {@link LedgerCommits.finish}). */
const IN_TURN = Symbol("in-turn commit");

export class LedgerCommits {
  /** The ledger completions go to; replaced when the bot starts again (cluster failover). */
  ledger: DeliveryLedger | undefined;
  readonly #o: LedgerCommitOptions;
  /**
   * The commit shared by every completion of this turn: a promise the conversation's next
   * message waits for, or IN_TURN for a synchronous commit at the turn's end.
   */
  #round: Promise<void> | typeof IN_TURN | undefined;

  constructor(options: LedgerCommitOptions) {
    this.#o = options;
  }

  /**
   * Record a completion. Found by test/e2e/crash-restart.test.ts: without a commit before the
   * conversation moves on, a crash ran a finished handler again.
   *
   * With a synchronous commit, that commit runs in a microtask queued by the turn's first
   * completion: the next message starts at once, but its synchronous part is all that can run
   * before the commit, since anything it awaits resumes in a later microtask and no I/O is
   * processed until the turn ends. Returns undefined then. Otherwise (a store that commits over
   * the network, or a FileStore compacting) returns the commit's promise, which the next message
   * of the conversation waits for.
   */
  finish(id: number): Promise<void> | undefined {
    this.ledger!.finish(id);
    const round = this.#round;
    if (round !== undefined) return round === IN_TURN ? undefined : round;
    if (this.#o.syncCommit?.ready()) {
      this.#round = IN_TURN;
      queueMicrotask(this.#commitInTurn);
      return undefined;
    }
    const hold = Promise.resolve().then(() => {
      this.#round = undefined;
      return this.#save();
    });
    this.#round = hold;
    return hold;
  }

  readonly #commitInTurn = (): void => {
    this.#round = undefined;
    // The store applies writes at the call (what syncCommit requires): save() has written its
    // keys once it returns, and its promise only reports.
    this.ledger!.save().catch((err: unknown) => this.#failed(err));
    try {
      // ready() said it would be synchronous; if not, commit the usual way.
      if (!this.#o.syncCommit!.commit()) void this.#save();
    } catch (err) {
      this.#failed(err);
    }
  };

  async #save(): Promise<void> {
    try {
      await this.ledger!.save();
      await (this.#o.commit ?? this.#o.flush)();
    } catch (err) {
      this.#failed(err);
    }
  }

  #failed(err: unknown): void {
    this.#o.log.error({ err }, "could not record handled messages in the state store; the next save retries");
  }
}
