/**
 * A state backend whose writes under one namespace path (`set` and batches) can be held back, as
 * a Redis that stopped answering holds them; refused before they land, as a Redis that is down
 * refuses them; or made and then answered with an error, as a connection lost after the write
 * and before its reply. Everything else passes straight through to the real store underneath.
 */
import { StateError } from "../../src/state/state-error.ts";
import type {
  JsonValue,
  OnceMarker,
  SetOptions,
  StateBackend,
  StateStore,
  StoreWrite,
  UpdateOptions,
} from "../../src/state/state-store.ts";

/** `lose`: the next write lands, its reply is lost; the gate is open again after it. */
export type GateMode = "open" | "hang" | "fail" | "lose";

export class StoreGate {
  mode: GateMode = "open";
  /** Writes let through before the mode applies (to stop the second write of an effect, say). */
  skip = 0;
  /**
   * Reads (`getMany`, a dialog's log entries) whose answer is held back, read at once, until
   * open(): as a slow reply to a read the store made (counted in `stopped` too).
   */
  readsHeld = 0;
  /** Writes refused, held or answered with an error so far under the gated path. */
  stopped = 0;
  /** The writes (and reads) held: each resumed with true (made), or false (refused, {@link refuse}). */
  #waiting: ((made: boolean) => void)[] = [];
  #watchers: { n: number; go: () => void }[] = [];

  /** Let every held write through, and the next ones. */
  open(): void {
    this.mode = "open";
    for (const go of this.#waiting.splice(0)) go(true);
  }

  /** Let the oldest write (or read) held so far through; the mode stays. */
  release(): void {
    this.#waiting.shift()?.(true);
  }

  /** Answer the oldest write held so far with the store's error, not made (a store that failed it late); the mode stays. */
  refuse(): void {
    this.#waiting.shift()?.(false);
  }

  /** Resolves once `n` writes in all were stopped (at once if they were). */
  stoppedAt(n: number): Promise<void> {
    if (this.stopped >= n) return Promise.resolve();
    return new Promise((go) => this.#watchers.push({ n, go }));
  }

  /** Runs `write` through the gate. */
  async pass<T>(write: () => Promise<T>): Promise<T> {
    const mode = this.mode;
    if (mode === "open") return write();
    if (this.skip > 0) {
      this.skip--;
      return write();
    }
    this.#stop();
    if (mode === "fail")
      throw new StateError("STATE_UNAVAILABLE", "the gated store refused a write (a test's outage)");
    if (mode === "lose") {
      this.mode = "open";
      await write();
      throw new StateError(
        "STATE_UNAVAILABLE",
        "the connection closed before the write's reply (a test's lost reply)",
      );
    }
    const made = await new Promise<boolean>((resolve) => this.#waiting.push(resolve));
    if (!made)
      throw new StateError("STATE_UNAVAILABLE", "the gated store failed a held write (a test's outage)");
    return write();
  }

  /** Runs `read` through the gate: made now, its answer held when {@link readsHeld} says so. */
  async read<T>(read: () => Promise<T>): Promise<T> {
    if (this.readsHeld === 0) return read();
    this.readsHeld--;
    const value = await read();
    this.#stop();
    await new Promise<boolean>((resolve) => this.#waiting.push(resolve));
    return value;
  }

  #stop(): void {
    this.stopped++;
    this.#watchers = this.#watchers.filter((w) => (w.n <= this.stopped ? (w.go(), false) : true));
  }
}

/**
 * `backend`, with the writes of namespace `path` (e.g. `["survey", "dialogs"]`) through `gate`;
 * its `update`s too with `updates`, its `delete`s with `deletes`.
 */
export function gatedBackend(
  backend: StateBackend,
  path: readonly string[],
  gate: StoreGate,
  options: { updates?: boolean; deletes?: boolean } = {},
): StateBackend {
  const wrap = (inner: StateStore, at: readonly string[]): StateStore => {
    const gated = at.length === path.length && at.every((name, i) => name === path[i]);
    return new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === "namespace") return (name: string) => wrap(target.namespace(name), [...at, name]);
        if (prop === "set" && gated) {
          return (key: string, value: JsonValue, options?: SetOptions) =>
            gate.pass(() => target.set(key, value, options));
        }
        if (prop === "update" && gated && options.updates) {
          return (
            key: string,
            fn: (current: JsonValue | undefined) => JsonValue | undefined,
            o?: UpdateOptions,
          ) => gate.pass(() => target.update(key, fn, o));
        }
        if (prop === "delete" && gated && options.deletes)
          return (key: string) => gate.pass(() => target.delete(key));
        if (prop === "getMany" && gated)
          return (keys: readonly string[]) => gate.read(() => target.getMany(keys));
        if (prop === "applyWrites" && gated) {
          return (writes: readonly StoreWrite[], once?: OnceMarker) =>
            gate.pass(() => target.applyWrites(writes, once));
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };
  return wrap(backend, []) as StateBackend;
}

/** `store`, closed by no daemon's stop: two daemons on one store, each may stop while the other goes on. */
export function unclosed(store: StateBackend): StateBackend {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "close") return async () => {};
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
