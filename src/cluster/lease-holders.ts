/**
 * Each bot's lease holder as the last round of leases read it, for `bothost status` to name for a
 * standby bot. A reading older than the lease ttl names no one: the holder's lease has expired
 * since unless it was renewed, and no round could see which (Redis out of reach).
 */
export class LeaseHolders {
  #holders: ReadonlyMap<string, string | undefined> = new Map();
  /** When the read that gave `#holders` was sent (on `now`); 0 before any. */
  #readAt = 0;

  constructor(
    private readonly self: string,
    private readonly ttlMs: number,
    /** The coordinator's monotonic time, the one its lease rounds are measured with. */
    private readonly now: () => number,
  ) {}

  /** A round's reading, sent at `sentAt` (on `now`). */
  read(holders: ReadonlyMap<string, string | undefined>, sentAt: number): void {
    this.#holders = holders;
    this.#readAt = sentAt;
  }

  holderOf(bot: string): string | undefined {
    // Never this instance: a bot held here is not on standby, and one handed over or lost since
    // that round is held by no one known until a round reads who took it.
    if (this.unreadForMs() !== undefined) return undefined;
    const holder = this.#holders.get(bot);
    return holder === this.self ? undefined : holder;
  }

  /** How long no round has read the leases, once that is longer than a ttl. */
  unreadForMs(): number | undefined {
    if (this.#readAt === 0) return undefined;
    const unread = this.now() - this.#readAt;
    return unread > this.ttlMs ? unread : undefined;
  }
}
