/**
 * The caches of a bot without a queue (an outgoing-webhook bot, a backtest): the users and user
 * groups it keeps (`bot.track("users", "groups")`, or a command's role or group check), which no
 * queue keeps current. They are seeded from a registration that asks for the initial state of
 * the bot's event types, its queue deleted at once. An outgoing-webhook bot takes the snapshot
 * again before a delivery (or a cron job's run) once it is older than {@link SNAPSHOT_MAX_AGE_MS}: a question others
 * answer (an approval by a group's member) and a command's permission are judged on membership
 * at most that old, and a bot that sees no message makes no call. A backtest keeps its first:
 * today's, as the history is read. A bot that keeps neither cache registers for heartbeats alone.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import { serverInfoFrom } from "../api/server-info.ts";
import type { BotServices } from "../effects/bot-services.ts";
import { registerParams } from "../events/register-params.ts";
import { identityOf } from "../events/server-queue.ts";
import type { Clock } from "../time/clock.ts";
import type { RegisterResponse } from "../wire/responses.ts";

/** How old an outgoing-webhook bot's snapshot may be when a delivery comes. */
export const SNAPSHOT_MAX_AGE_MS = 60_000;

/** After a registration that failed, how long before a delivery tries again. */
const RETRY_MS = 10_000;
/** How long the delivery waits for the registration: well within the server's 10 s for an answer. */
const TAKE_TIMEOUT_MS = 3_000;

/** The event types whose initial state seeds a cache (register-params.ts fetches them alike). */
const CACHED = ["realm_user", "user_group"];

/** The event types of a bot without a queue (`null`: all). */
export type SnapshotTypes = readonly string[] | null;

/** Whether a bot with `types` keeps a cache a snapshot seeds. */
export const keepsCaches = (types: SnapshotTypes | undefined): boolean =>
  types === null || (types ?? []).some((t) => CACHED.includes(t));

export interface CacheSnapshotOptions {
  client: Client;
  log: Logger;
  clock: Pick<Clock, "now">;
  services: Pick<BotServices, "onRegistered">;
  /** A backtest's: the first snapshot is kept (today's, as the history is read). */
  once: boolean;
}

export class CacheSnapshot {
  readonly #o: CacheSnapshotOptions;
  #types: SnapshotTypes | undefined;
  #at = Number.NEGATIVE_INFINITY;
  #taking: Promise<void> | undefined;

  constructor(options: CacheSnapshotOptions) {
    this.#o = options;
  }

  /** What this start's registration asks for: the bot's event types when it keeps a cache, else undefined. */
  typesFor(types: SnapshotTypes | undefined): SnapshotTypes | undefined {
    this.#types = keepsCaches(types) ? types! : undefined;
    return this.#types;
  }

  /** Seed the caches from `reg` (made with {@link typesFor}'s types). */
  seeded(reg: RegisterResponse, self: { userId: number }): void {
    if (this.#types === undefined) return;
    this.#o.services.onRegistered(serverInfoFrom(reg), self, reg);
    this.#at = this.#o.clock.now();
  }

  /**
   * Before a delivery or a job's run: the snapshot taken again when it is too old (one at a time; what else
   * comes meanwhile waits for the same one), else undefined. A registration that fails leaves
   * the snapshot as it was (logged; tried again after 10 s at the soonest): the delivery goes on.
   * The registration is given 3 s, so that the delivery is still answered in the server's time.
   */
  fresh(): Promise<void> | undefined {
    if (this.#types === undefined || this.#o.once || this.#o.clock.now() - this.#at < SNAPSHOT_MAX_AGE_MS)
      return undefined;
    this.#taking ??= this.#take().finally(() => {
      this.#taking = undefined;
    });
    return this.#taking;
  }

  async #take(): Promise<void> {
    const { client, log } = this.#o;
    const options = { retry: { maxAttempts: 1 }, timeoutMs: TAKE_TIMEOUT_MS };
    try {
      const reg = await client.events.register(registerParams({ eventTypes: this.#types! }), options);
      if (reg.queue_id) void client.events.deleteQueue(reg.queue_id).catch(() => {});
      this.seeded(reg, await identityOf(reg, client));
    } catch (err) {
      this.#at = Math.max(this.#at, this.#o.clock.now() - SNAPSHOT_MAX_AGE_MS + RETRY_MS);
      log.warn(
        { err: err instanceof Error ? err.message : String(err) },
        "could not read the users and groups again: the bot judges this message by the ones it read before",
      );
    }
  }
}
