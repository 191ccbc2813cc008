/**
 * The timing rule that keeps two instances from running one bot at the same time.
 *
 * A lease is written with a `ttl` expiry on Redis's clock, at some instant after the holder sent
 * the command. The holder counts its lease valid only until `sent + ttl·2/3` on its own
 * monotonic clock, renews every `ttl/3` (so a healthy holder renews twice inside each validity
 * window), and once a renewal is overdue it stops the bot, aborting handlers still running
 * `ttl/6` later. Another instance can take the lease only after Redis expired it, at
 * `≥ sent + ttl`. So the old holder has stopped at least `ttl/6` before the new one can start:
 * that margin absorbs clock-rate drift between the machines and Redis (parts per million) and
 * scheduling delays. A process frozen for longer than the margin (a stopped VM) can still wake up
 * mid-handler; its state writes are then refused by the fence, but a message it sends is sent.
 */

export interface LeaseTiming {
  ttlMs: number;
  /** How often leases are renewed (and free bots looked for). */
  renewEveryMs: number;
  /** How long after a renewal was sent the holder may still act on it. */
  validForMs: number;
  /** Handlers of a bot whose lease is lost are aborted this long after validity ended. */
  haltDeadlineMs: number;
}

/**
 * @example
 * ```ts
 * leaseTiming(15_000); // { ttlMs: 15000, renewEveryMs: 5000, validForMs: 10000, haltDeadlineMs: 2500 }
 * ```
 */
export function leaseTiming(ttlMs: number): LeaseTiming {
  return {
    ttlMs,
    renewEveryMs: Math.floor(ttlMs / 3),
    validForMs: Math.floor((ttlMs * 2) / 3),
    haltDeadlineMs: Math.floor(ttlMs / 6),
  };
}
