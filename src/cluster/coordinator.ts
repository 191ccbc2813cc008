/**
 * Which bots this instance runs. One instance with the embedded store runs them all
 * ({@link SoloCoordinator}); several instances sharing a Redis store split them by leases
 * (`LeaseCoordinator`). The daemon only ever talks to this interface.
 */
import type { StateBackend, StateStore } from "../state/state-store.ts";

/** What the coordinator asks of the daemon. */
export interface CoordinatorHooks {
  /**
   * This instance now holds these bots' leases: start them. Errors are the daemon's to report,
   * and a bot that fails to start is the daemon's to tell `startFailed` about.
   */
  run(bots: readonly string[]): Promise<void>;
  /**
   * Stop this bot here within `deadlineMs` (handlers still running then are aborted): its lease
   * was lost, or it is handed to another instance. Must resolve even if the bot never started.
   * `elsewhere`: another instance holds it (or is to take it); false when the lease could not be
   * renewed (the store out of reach): nobody may be running it.
   */
  halt(bot: string, deadlineMs: number, elsewhere: boolean): Promise<unknown>;
  /** Another instance holds this bot's lease, as a round read it: stopped here, it is a spare. */
  elsewhere?(bot: string): void;
}

/**
 * No round read the leases for `forMs` (longer than a ttl). `late`: no read failed, this
 * instance's rounds ran late (the process starved of CPU, its event loop blocked); otherwise the
 * last read failed (Redis out of reach, or answering too slowly).
 */
export interface LeasesUnread {
  forMs: number;
  late: boolean;
}

export interface Coordinator {
  /** `solo`: one instance runs every bot; `cluster`: instances share them by leases. */
  readonly mode: "solo" | "cluster";
  /** The store a bot's runtime, helpers and webhooks write through (fenced by its lease in a cluster). */
  storeFor(bot: string): StateStore;
  /** Take the first bots (their `run` has resolved when this does), then keep coordinating. */
  start(hooks: CoordinatorHooks): Promise<void>;
  /**
   * Take no more bots, let `stopAll` stop the running ones (their leases are kept alive
   * meanwhile, so their last writes count), then give every lease up.
   */
  stop(stopAll: () => Promise<void>): Promise<void>;
  /**
   * Whether this instance may run the bot now: always in solo mode; in a cluster, while it holds
   * the bot's lease and is not handing it over (a reload starts a changed bot only then).
   */
  runsHere(bot: string): boolean;
  /** The instance holding this bot's lease, as the last round read it, within a ttl (cluster mode). */
  holderOf?(bot: string): string | undefined;
  /** How long no round read the leases, once longer than a ttl, and why (cluster mode). */
  leasesUnread?(): LeasesUnread | undefined;
  /** Why this instance lost the bot's lease, while it has not taken it again (cluster mode). */
  lostLease?(bot: string): string | undefined;
  /**
   * The bot failed to start here. In a cluster its lease is given back: `forNow` (the store out of
   * reach) for a later round to take it again anywhere; otherwise for another instance to run it,
   * this one refusing it until {@link retryHere}.
   */
  startFailed(bot: string, forNow: boolean): void;
  /** A new version of the bot is in place (a reload): this instance may run it again. */
  retryHere(bot: string): void;
  /** Whether this instance refuses the bot: it failed to start here (see `startFailed`; cluster mode). */
  refuses?(bot: string): boolean;
}

/** Every bot, in this one process, on the store as it is: no leases, no fencing. */
export class SoloCoordinator implements Coordinator {
  readonly mode = "solo";

  constructor(
    private readonly store: StateBackend,
    private readonly bots: readonly string[],
  ) {}

  storeFor(_bot: string): StateStore {
    return this.store;
  }

  runsHere(_bot: string): boolean {
    return true;
  }

  /** One instance: the bot stays failed here until a reload starts it again. */
  startFailed(_bot: string, _forNow: boolean): void {}

  retryHere(_bot: string): void {}

  async start(hooks: CoordinatorHooks): Promise<void> {
    await hooks.run(this.bots);
  }

  async stop(stopAll: () => Promise<void>): Promise<void> {
    await stopAll();
  }
}
