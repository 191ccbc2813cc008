/**
 * Changes that failed for a passing reason, tried again later. Passing: the server or a proxy in
 * front of it failed (a 5xx, an answer that is not JSON), no answer came (a timeout, a lost
 * connection), the account was rate limited (429), or the run was cut short (its handler's
 * timeout). A change refused for good (a 4xx with a code: a missing permission, a bad value) is
 * not tried again. Such a change may have been made although its answer failed, so a retry reads
 * the organization again and plans again: a change made is then seen as done, never made twice.
 */
import type { Client } from "bothost";
import type { Action } from "./plan.ts";

/** The first retry comes after a minute; each one after a failed retry waits twice as long, up to 30. */
const FIRST_DELAY_MS = 60_000;
const MAX_DELAY_MS = 30 * 60_000;

/**
 * Whether the call that threw `err` is worth making again later. By name, code and status, not
 * instanceof: the bot and the daemon running it may load separate copies of bothost.
 */
export function isPassing(err: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted) return true;
  const e = (err ?? {}) as { name?: unknown; code?: unknown; status?: unknown };
  if (e.code === "NETWORK_ERROR" || e.code === "BAD_RESPONSE") return true;
  if (typeof e.status !== "number" || e.name === "AuthError") return false;
  return e.status === 429 || e.status >= 500;
}

/** A 429 (or a cut-short run): the calls after it would only wait or fail the same way. */
export function stopsThePass(err: unknown, signal?: AbortSignal): boolean {
  return signal?.aborted === true || (err as { status?: unknown } | null)?.status === 429;
}

/** What a change is about, the same from one plan to the next (a group's add list may grow). */
export function actionKey(action: Action): string {
  switch (action.kind) {
    case "user_settings_defaults":
      return action.kind;
    case "channel_folder":
      return `${action.kind}:${action.name.toLowerCase()}`;
    case "playground":
      return `${action.kind}:${action.name}:${action.pygments_language}`;
    case "email_domain":
      return `${action.kind}:${action.domain}`;
    case "group_members":
      return `${action.kind}:${action.groupId}`;
  }
}

/** The changes to try again, and when; a sync that ends with none resets the backoff. */
export class Retries {
  /** Key → log line of each change to try again; `"all"`: the organization could not be read. */
  #pending: Map<string, string> | "all" = new Map();
  #at: number | undefined;
  #delay = FIRST_DELAY_MS;

  get pending(): ReadonlyMap<string, string> | "all" {
    return this.#pending;
  }

  /** Whether a retry is waiting and its time has come. */
  due(now: number): boolean {
    return this.#at !== undefined && now >= this.#at;
  }

  /**
   * Record what a sync left to try again (nothing: the backoff starts over). Returns when the
   * retry comes: after the backoff, and not before the account's budget has room for a call (a
   * 429 holds it until its retry-after), at a whole minute (the check runs each minute).
   */
  settle(left: Map<string, string> | "all", now: number, client: Client): number | undefined {
    this.#pending = left;
    if (left !== "all" && left.size === 0) {
      this.#at = undefined;
      this.#delay = FIRST_DELAY_MS;
      return undefined;
    }
    const earliest = Math.max(now + this.#delay, client.budget.other.nextStartAt(now));
    this.#at = Math.ceil(earliest / 60_000) * 60_000;
    this.#delay = Math.min(this.#delay * 2, MAX_DELAY_MS);
    return this.#at;
  }
}
