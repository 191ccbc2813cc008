import { BothostError } from "../errors/bothost-error.ts";

/**
 * Why the state store refused or failed:
 * - `STATE_CORRUPT`: a state file on disk cannot be read back (the message names the file and line).
 * - `STATE_IO`: the disk refused a read or write (full disk, permissions); the cause has the OS error.
 * - `STATE_LOCKED`: another live process holds the state directory (`heldBy` says what: a daemon,
 *   or a short-lived command such as `bothost dialogs` that did not end within a few seconds).
 * - `STATE_INVALID_KEY`: a key or namespace name is empty, too long, or not a string.
 * - `STATE_INVALID_VALUE`: a value is not plain JSON (the message gives the path inside the value).
 * - `STATE_CLOSED`: the store was used after `close()`.
 * - `STATE_FENCED`: a write of a bot whose lease this instance no longer holds (several instances
 *   sharing a Redis store); the write was refused, nothing changed.
 * - `STATE_UNAVAILABLE`: the Redis server could not be reached or did not answer in time.
 * - `STATE_SERVER_MISMATCH`: a bot's state was recorded with another server or organization than
 *   the one it talks to now; the message names both and how to reset or move the state.
 */
export type StateErrorCode =
  | "STATE_CORRUPT"
  | "STATE_IO"
  | "STATE_LOCKED"
  | "STATE_INVALID_KEY"
  | "STATE_INVALID_VALUE"
  | "STATE_CLOSED"
  | "STATE_FENCED"
  | "STATE_UNAVAILABLE"
  | "STATE_SERVER_MISMATCH";

/**
 * An error raised by a state store.
 *
 * @example
 * ```ts
 * try { await FileStore.open(".bothost/state"); }
 * catch (err) { if (isStateError(err) && err.code === "STATE_LOCKED") console.error(err.message); }
 * ```
 */
export class StateError extends BothostError<StateErrorCode> {
  /** With `STATE_LOCKED`: what holds the directory, when its lock says. */
  readonly heldBy?: "daemon" | "command";

  constructor(
    code: StateErrorCode,
    message: string,
    options?: { cause?: unknown; heldBy?: "daemon" | "command" },
  ) {
    super(code, message, options !== undefined && "cause" in options ? { cause: options.cause } : undefined);
    this.name = "StateError";
    if (options?.heldBy !== undefined) this.heldBy = options.heldBy;
  }
}

/**
 * True when the store could not be reached or did not answer (`STATE_UNAVAILABLE`: a Redis outage),
 * could not write to its disk (`STATE_IO`: the embedded store's disk full, say), or refused this
 * instance's write (`STATE_FENCED`: the bot's lease is lost): conditions of the deployment, which
 * pass or move the bot elsewhere, not faults of the code that used the store.
 */
export function isStoreOutage(err: unknown): err is StateError {
  return (
    err instanceof StateError &&
    (err.code === "STATE_UNAVAILABLE" || err.code === "STATE_IO" || err.code === "STATE_FENCED")
  );
}

/** True for any {@link StateError}. */
export function isStateError(err: unknown): err is StateError {
  return err instanceof StateError;
}
