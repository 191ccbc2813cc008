/**
 * Parts of LeaseCoordinator: the lease's timing rule (see lease-coordinator.ts), all derived from
 * one ttl, and how it stops a bot here.
 */
import type { Logger } from "pino";
import type { Fence } from "../state/redis-connection.ts";
import { leaseLostLine } from "./bot-switch.ts";
import type { CoordinatorHooks } from "./coordinator.ts";
import type { RedisLeases } from "./redis-leases.ts";

export function leaseTiming(ttlMs: number) {
  return {
    ttlMs,
    /** How often leases are renewed (and free bots looked for). */
    renewEveryMs: Math.floor(ttlMs / 3),
    /** How long after a renewal was sent the holder may still act on it. */
    validForMs: Math.floor((ttlMs * 2) / 3),
    /** Handlers of a bot whose lease is lost are aborted this long after validity ended. */
    haltDeadlineMs: Math.floor(ttlMs / 6),
    /**
     * Why a lease held here ran out unrenewed, its watchdog firing `lateMs` past its validity: that
     * late, the watchdog was held up by this process itself (stopped, its event loop blocked), not Redis.
     */
    unrenewed(lateMs: number): string {
      if (lateMs < ttlMs / 6) return "its lease could not be renewed in time (is Redis reachable?)";
      const s = (lateMs / 1000).toFixed(1);
      return `this process was paused past its lease's validity (${s} s more: stopped, or its event loop blocked)`;
    },
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
  /** With `lost`: the instance that took the lease (a renewal found it holding it). */
  holder?: string;
  said?: boolean;
}

/** What {@link haltBot} reaches of the coordinator. */
export interface HaltParts {
  hooks: Pick<CoordinatorHooks, "halt"> | undefined;
  log: Logger;
  /** The bots being stopped here, each until its stop is over (its lost line said): then it resolves. */
  halting: Map<string, Promise<void>>;
  leases: Pick<RedisLeases, "release"> | undefined;
  /** Whether this instance holds `bot`'s lease (again) now. */
  held(bot: string): boolean;
}

/**
 * Stop `bot` here, its handlers aborted after `ms`; `elsewhere`: another instance runs it. Then
 * `notes.before`, and its lease (`fence`) is released unless held here again by then. `notes.lost`:
 * why its lease was lost (said once stopped, with the events left in flight, and `notes.holder`,
 * the instance holding it now, when known); `notes.said`: its stop was said already.
 */
export function haltBot(
  parts: HaltParts,
  what: { bot: string; fence: Fence; ms: number; elsewhere: boolean },
  notes: HaltNotes,
): void {
  const { bot, fence, ms, elsewhere } = what;
  const { before, lost, holder, said } = notes;
  parts.halting.set(bot, Promise.resolve()); // among them from now on: its stop's own promise below
  const stop = (async () => {
    let left: number | undefined;
    try {
      const halted = await parts.hooks?.halt(bot, ms, elsewhere);
      left = (halted as { abandoned?: number } | undefined)?.abandoned ?? 0;
      if (lost === undefined && !said)
        parts.log.info(
          { bot, left },
          elsewhere
            ? "the bot stopped here: another instance runs it"
            : "the bot stopped here until its lease can be taken again: it runs nowhere meanwhile",
        );
    } catch (err) {
      parts.log.error({ bot, err }, "the bot did not stop cleanly");
    }
    if (lost !== undefined)
      parts.log.warn(
        { bot, reason: lost, ...(holder !== undefined && { holder }), left },
        leaseLostLine(holder),
      );
    before?.();
    // Nothing if the lease is someone else's by now; else others need not wait for the ttl.
    if (!parts.held(bot)) await parts.leases?.release(fence).catch(() => {});
    parts.halting.delete(bot);
  })();
  parts.halting.set(bot, stop);
}
