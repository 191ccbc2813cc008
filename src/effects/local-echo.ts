/**
 * Local echo (see docs/internals/server-behaviour.md#event-shapes): a send that carries the bot's
 * `queue_id` and a `local_id` comes back in that queue as the bot's own message event, with
 * `local_message_id` = the local id. When a send's answer is lost, that event proves the server
 * stored the message, and names it: no read-back needed. Only sends still in flight are remembered.
 */
import { ApiError, BadResponseError, NetworkError } from "../api/errors.ts";
import type { Clock } from "../time/clock.ts";

/** How long a send whose answer was lost waits for its echo before it counts as not made. */
export const ECHO_WAIT_MS = 2_000;

interface Pending {
  id?: number;
  resolve?: (id: number) => void;
}

export class LocalEcho {
  /** The queue the bot polls now; undefined (none, or no `message` events): sends carry no local id. */
  queue: string | undefined;
  #n = 0;
  /** Sends in flight by local id; made by the first send that can echo. */
  #pending: Map<string, Pending> | undefined;
  readonly #clock: Clock;

  /** `clock`: what the wait for an echo is timed on. */
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** The fields that make a send echo, registered as in flight; undefined when none can echo. */
  tag(): { queue_id: string; local_id: string } | undefined {
    if (this.queue === undefined) return undefined;
    const local_id = `${++this.#n}.01`;
    this.#pending ??= new Map();
    this.#pending.set(local_id, {});
    return { queue_id: this.queue, local_id };
  }

  /**
   * The newest message id the bot knows exists (from its queue's messages and its sends' answers):
   * a send begun now gets a newer one, so its read-back looks past this (see context-send.ts).
   */
  newest = 0;

  /** A message the bot knows exists: one of its queue's, or one a send of its made. */
  seen(messageId: number): void {
    if (messageId > this.newest) this.newest = messageId;
  }

  /** A message event of the bot's queue (`localId`: the one its send carried, if any). */
  arrived(localId: string | undefined, messageId: number): void {
    this.seen(messageId);
    if (localId === undefined) return;
    const pending = this.#pending?.get(localId);
    if (!pending) return;
    pending.id = messageId;
    pending.resolve?.(messageId);
  }

  /** The send answered (or is given up on): its id is no longer watched. */
  done(localId: string): void {
    this.#pending?.delete(localId);
  }

  /** The id of the message the send `localId` made, if its echo comes within `ms`. */
  async wait(localId: string, ms: number, signal: AbortSignal): Promise<number | undefined> {
    const pending = this.#pending?.get(localId);
    if (!pending) return undefined;
    try {
      if (pending.id !== undefined) return pending.id;
      return await new Promise<number | undefined>((resolve) => {
        const timer = this.#clock.setTimeout(() => resolve(undefined), ms);
        const stop = () => {
          this.#clock.clearTimeout(timer);
          resolve(undefined);
        };
        signal.addEventListener("abort", stop, { once: true });
        pending.resolve = (id) => {
          this.#clock.clearTimeout(timer);
          signal.removeEventListener("abort", stop);
          resolve(id);
        };
      });
    } finally {
      this.done(localId);
    }
  }
}

/**
 * Did the request maybe reach the server, which may have acted, with its answer lost? A JSON
 * 4xx is a definite refusal; a 5xx, a body that is not JSON, or a connection that failed after
 * the request was written are not.
 */
export function isAmbiguous(err: unknown): boolean {
  if (err instanceof ApiError) return err.status >= 500;
  if (err instanceof BadResponseError) return true;
  return err instanceof NetworkError && err.requestSent;
}

/**
 * Did the server refuse the request outright, so that it did not act? A JSON 4xx, thrown as it
 * came or as the cause of the error that names it (a booking's `SCHEDULE_INVALID`).
 */
export function isRefusal(err: unknown): boolean {
  const api = err instanceof ApiError ? err : (err as { cause?: unknown } | null)?.cause;
  return api instanceof ApiError && api.status >= 400 && api.status < 500;
}
