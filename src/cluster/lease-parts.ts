/**
 * Parts of LeaseCoordinator: the lease's timing rule (see lease-coordinator.ts), all derived from
 * one ttl, and what it keeps of a lease held here.
 */
import type { Fence } from "../state/redis-connection.ts";

export function leaseTiming(ttlMs: number) {
  return {
    ttlMs,
    /** How often leases are renewed (and free bots looked for). */
    renewEveryMs: Math.floor(ttlMs / 3),
    /** How long after a renewal was sent the holder may still act on it. */
    validForMs: Math.floor((ttlMs * 2) / 3),
    /** Handlers of a bot whose lease is lost are aborted this long after validity ended. */
    haltDeadlineMs: Math.floor(ttlMs / 6),
  };
}

/** An error's message, for a log field. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** What a bot's halt says, and does before its lease is released. */
export interface HaltNotes {
  before?: () => void;
  lost?: string;
  said?: boolean;
}

export interface Held {
  fence: Fence;
  /** Until when (on `now()`) this instance may act on the lease. */
  validUntil: number;
  watchdog: NodeJS.Timeout | undefined;
  handingOver: boolean;
}
