/**
 * A state backend whose `set` writes under one namespace path can be held back, as a Redis that
 * stopped answering holds them, or refused, as a Redis that is down refuses them, until the gate
 * opens again. Everything else passes straight through to the real store underneath.
 */
import { StateError } from "../../src/state/state-error.ts";
import type { JsonValue, SetOptions, StateBackend, StateStore } from "../../src/state/state-store.ts";

export type GateMode = "open" | "hang" | "fail";

export class StoreGate {
  mode: GateMode = "open";
  /** Writes refused or held so far under the gated path. */
  stopped = 0;
  #waiting: (() => void)[] = [];

  /** Let every held write through, and the next ones. */
  open(): void {
    this.mode = "open";
    for (const go of this.#waiting.splice(0)) go();
  }

  async pass(): Promise<void> {
    if (this.mode === "open") return;
    this.stopped++;
    if (this.mode === "fail")
      throw new StateError("STATE_UNAVAILABLE", "the gated store refused a write (a test's outage)");
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }
}

/** `backend`, with the `set` calls of namespace `path` (e.g. `["survey", "dialogs"]`) through `gate`. */
export function gatedBackend(backend: StateBackend, path: readonly string[], gate: StoreGate): StateBackend {
  const wrap = (inner: StateStore, at: readonly string[]): StateStore => {
    const gated = at.length === path.length && at.every((name, i) => name === path[i]);
    return new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === "namespace") return (name: string) => wrap(target.namespace(name), [...at, name]);
        if (prop === "set" && gated) {
          return async (key: string, value: JsonValue, options?: SetOptions) => {
            await gate.pass();
            return target.set(key, value, options);
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };
  return wrap(backend, []) as StateBackend;
}
