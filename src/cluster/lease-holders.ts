/**
 * Each bot's lease holder as the last round of leases read it, for `bothost status` to name for a
 * standby bot. A reading older than the lease ttl names no one: the holder's lease has expired
 * since unless it was renewed, and no round could see which (Redis out of reach). A holder an
 * acquisition or renewal found since (the lease taken after the round's read) is named at once,
 * until its lease would expire unrenewed or a round reads the leases again.
 *
 * And, once Redis lost its keys (the leases' epoch changed between two readings), which bots
 * another instance held before: for a ttl from then, those are left to that instance to take
 * again. It ran them, so it alone carries on from where they were (their cursor and marks, and
 * the dialogs it knew, kept in its memory: delivery-ledger.ts, dialogs.ts); another instance
 * would start them over from the newest message. Should that instance be gone too, its bots are
 * taken once the ttl has passed, as an expired lease's are.
 */
export class LeaseHolders {
  #holders: ReadonlyMap<string, string | undefined> = new Map();
  /** Holders found after a round's read, when found (on `now`) and until when their lease lasts unrenewed. */
  readonly #found = new Map<string, { holder: string; at: number; until: number }>();
  /** When the read that gave `#holders` was sent (on `now`); 0 before any. */
  #readAt = 0;
  #epoch: string | undefined;
  /** The holders the last reading before the keys were lost saw, and until when they are left to them. */
  #before: { holders: ReadonlyMap<string, string | undefined>; until: number } | undefined;

  constructor(
    private readonly self: string,
    private readonly ttlMs: number,
    /** The coordinator's monotonic time, the one its lease rounds are measured with. */
    private readonly now: () => number,
  ) {}

  /** A round's reading, sent at `sentAt` (on `now`), of the leases of `epoch`. */
  read(holders: ReadonlyMap<string, string | undefined>, sentAt: number, epoch: string): void {
    if (this.#epoch !== undefined && epoch !== this.#epoch)
      this.#before = { holders: this.#holders, until: sentAt + this.ttlMs };
    this.#epoch = epoch;
    this.#holders = holders;
    this.#readAt = sentAt;
    for (const [bot, found] of this.#found) if (found.at < sentAt) this.#found.delete(bot);
  }

  /**
   * An acquisition or renewal, its reply just in, found `holder` holding `bot`'s lease with
   * `leftMs` left of it (on Redis's clock, by now a round trip less at most).
   */
  found(bot: string, holder: string, leftMs: number): void {
    const at = this.now();
    if (holder !== this.self) this.#found.set(bot, { holder, at, until: at + leftMs });
  }

  /** Whether `bot` is left to the instance that held it before Redis lost its keys (see above). */
  leftToOthers(bot: string): boolean {
    const before = this.#before;
    if (before === undefined || this.now() >= before.until) return false;
    const holder = before.holders.get(bot);
    return holder !== undefined && holder !== this.self;
  }

  holderOf(bot: string): string | undefined {
    // Never this instance: a bot held here is not on standby, and one handed over since that round
    // is held by no one known until a round (or a refused acquisition) reads who took it; one lost
    // to a refused renewal is named by it (`found`).
    const found = this.#found.get(bot);
    if (found !== undefined && this.now() < found.until) return found.holder;
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
