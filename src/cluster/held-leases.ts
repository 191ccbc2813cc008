/**
 * The leases this instance holds, taken as a round finds them free, each valid on this process's monotonic clock until
 * `sent + ttl·2/3` of its last renewal (the timing rule in lease-coordinator.ts). A watchdog
 * stops the bot once its lease runs out unrenewed; a renewal that finds the lease taken or gone
 * stops it too. Why a lease was lost is kept until the bot is taken again, for `bothost status`.
 */
import type { Logger } from "pino";
import { type Fence, fencingTokenOf } from "../state/redis-connection.ts";
import type { TakeFrom } from "./gone-holders.ts";
import type { HaltNotes, leaseTiming } from "./lease-parts.ts";
import type { HeldElsewhere, RedisLeases } from "./redis-leases.ts";

export interface Held {
  fence: Fence;
  /** Until when (on `performance.now()`) this instance may act on the lease. */
  validUntil: number;
  watchdog: NodeJS.Timeout | undefined;
  handingOver: boolean;
}

/** Stop `bot` here, its handlers aborted after `ms` (the coordinator's halt, see `haltBot`). */
type Halt = (bot: string, fence: Fence, ms: number, elsewhere: boolean, notes: HaltNotes) => void;

/** An acquisition or renewal of `bot`'s lease found it held by another instance (told as its reply comes). */
type Seen = (bot: string, by: HeldElsewhere) => void;

export class HeldLeases {
  readonly #held = new Map<string, Held>();
  /** Why a bot's lease was lost here, until it is taken again (here or elsewhere). */
  readonly #lost = new Map<string, string>();

  constructor(
    private readonly timing: ReturnType<typeof leaseTiming>,
    private readonly log: Logger,
    private readonly halt: Halt,
    private readonly seen: Seen,
  ) {}

  get size(): number {
    return this.#held.size;
  }

  /** The bots whose lease is held here. */
  get bots(): string[] {
    return [...this.#held.keys()];
  }

  /** How many of them run here: not being handed over. */
  get active(): number {
    return [...this.#held.values()].filter((h) => !h.handingOver).length;
  }

  /** Whether one of them is being handed over to another instance. */
  get handingOver(): boolean {
    return [...this.#held.values()].some((h) => h.handingOver);
  }

  has(bot: string): boolean {
    return this.#held.has(bot);
  }

  get(bot: string): Held | undefined {
    return this.#held.get(bot);
  }

  runsHere(bot: string): boolean {
    const held = this.#held.get(bot);
    return held !== undefined && !held.handingOver;
  }

  /** The bot's fence while its lease is valid here; none once it ran out. */
  fenceOf(bot: string): Fence | undefined {
    const held = this.#held.get(bot);
    return held && performance.now() < held.validUntil ? held.fence : undefined;
  }

  lostReason(bot: string): string | undefined {
    return this.#lost.get(bot);
  }

  /** The bot runs elsewhere: a lease it lost here is no reason to show now. */
  forgetLoss(bot: string): void {
    this.#lost.delete(bot);
  }

  /**
   * Take `bot`'s lease, over from a gone process of this host (`from`) or free; false: another
   * instance has it (told to `seen`, when free before). Rejects when Redis is out of reach.
   * `stopping`: the bot's stop here under way (its lease just found gone from Redis, taken again at
   * once): the bot starts again only once it ends, and so is its taking said, after its loss.
   */
  async acquire(
    leases: RedisLeases,
    bot: string,
    from: TakeFrom | undefined,
    stopping?: Promise<void>,
  ): Promise<boolean> {
    const sentAt = performance.now();
    const fence = await (from
      ? leases.takeOver(bot, from.seen, from.dead)
      : leases.acquire(bot, (by) => this.seen(bot, by)));
    if (!fence) return false;
    const held: Held = { fence, validUntil: 0, watchdog: undefined, handingOver: false };
    this.#held.set(bot, held);
    this.#extend(bot, held, sentAt);
    this.#lost.delete(bot);
    // A number, no secret: not under a key the log redacts (`token`).
    const fencingToken = fencingTokenOf(fence);
    if (from)
      this.log.info(
        { bot, from: from.dead },
        "the instance holding the bot's lease was a process of this host that is gone: its lease is taken now",
      );
    const said = () =>
      this.log.info({ bot, fencingToken }, "lease acquired; starting the bot on this instance");
    if (stopping) void stopping.then(said);
    else said();
    return true;
  }

  /** Held here no more, with nothing said or stopped (the caller does that): `only` if still that lease. */
  drop(bot: string, only?: Held): Held | undefined {
    const held = this.#held.get(bot);
    if (!held || (only !== undefined && held !== only)) return undefined;
    clearTimeout(held.watchdog);
    this.#held.delete(bot);
    return held;
  }

  /** On stop: release every lease held here; `failed` says which could not be (it expires by itself). */
  async releaseAll(
    leases: Pick<RedisLeases, "release"> | undefined,
    failed: (bot: string, err: unknown) => void,
  ): Promise<void> {
    for (const [bot, held] of this.#held) {
      clearTimeout(held.watchdog);
      await leases?.release(held.fence).catch((err: unknown) => failed(bot, err));
    }
    this.#held.clear();
  }

  /** Renew every lease held here; resolves the bots whose lease was gone (held by nobody). */
  async renewAll(leases: RedisLeases): Promise<string[]> {
    const entries = [...this.#held];
    if (entries.length === 0) return [];
    const sentAt = performance.now();
    const renewed = await leases.renew(entries.map(([, held]) => held.fence));
    const gone: string[] = [];
    entries.forEach(([bot, held], i) => {
      if (this.#held.get(bot) !== held) return; // lost meanwhile
      const renewal = renewed[i];
      if (renewal === "renewed") this.#extend(bot, held, sentAt);
      else if (typeof renewal === "object") {
        this.seen(bot, renewal);
        this.#lose(bot, `instance ${renewal.holder} holds its lease now`, renewal.holder);
      } else {
        this.#lose(bot, "its lease is gone from Redis (it expired, or Redis lost its keys)");
        gone.push(bot);
      }
    });
    return gone;
  }

  #extend(bot: string, held: Held, sentAt: number): void {
    held.validUntil = Math.max(held.validUntil, sentAt + this.timing.validForMs);
    clearTimeout(held.watchdog);
    held.watchdog = setTimeout(
      () => this.#lose(bot, this.timing.unrenewed(performance.now() - held.validUntil)),
      Math.max(0, held.validUntil - performance.now()),
    );
  }

  /** The lease is no longer this instance's: `holder`, the instance holding it now, when one does. */
  #lose(bot: string, reason: string, holder?: string): void {
    const held = this.drop(bot);
    if (!held) return;
    this.#lost.set(bot, reason);
    // Said once the bot stopped (within ttl/6), with the events it left: its only warn line.
    this.halt(bot, held.fence, this.timing.haltDeadlineMs, holder !== undefined, { lost: reason, holder });
  }
}
