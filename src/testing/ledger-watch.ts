/**
 * What tells a test that a bot has handled a message: the bot's delivery ledger, as it is written
 * to the state store. The ledger records a message only after its handlers finished (and, when
 * every attempt failed, after the event was kept as a dead letter), as a cursor (every message up
 * to it that reached the bot is done) and marks of messages done out of order ("3-5,9", under
 * `finished` and its slots `finished.0`, …). The
 * store is observed at its writes, so a waiting test wakes when the record lands: no polling.
 */
import { MARK_KEYS } from "../pipeline/delivery-ledger.ts";
import type {
  JsonValue,
  OnceMarker,
  SetOptions,
  StateBackend,
  StateStore,
  StoreWrite,
  UpdateOptions,
} from "../state/state-store.ts";

type OnWrite = (path: readonly string[], key: string, value: JsonValue | undefined) => void;

/** A view of `inner` that reports every write (after it is applied) with its namespace path. */
class ObservedStore implements StateStore {
  constructor(
    protected readonly inner: StateStore,
    private readonly path: readonly string[],
    private readonly onWrite: OnWrite,
  ) {}

  get(key: string) {
    return this.inner.get(key);
  }
  getMany(keys: readonly string[]) {
    return this.inner.getMany(keys);
  }
  list(prefix?: string) {
    return this.inner.list(prefix);
  }
  async set(key: string, value: JsonValue, options?: SetOptions): Promise<void> {
    await this.inner.set(key, value, options);
    this.onWrite(this.path, key, value);
  }
  async setIfAbsent(key: string, value: JsonValue, options?: SetOptions): Promise<boolean> {
    const made = await this.inner.setIfAbsent(key, value, options);
    if (made) this.onWrite(this.path, key, value);
    return made;
  }
  async update(
    key: string,
    fn: (current: JsonValue | undefined) => JsonValue | undefined,
    options?: UpdateOptions,
  ): Promise<JsonValue | undefined> {
    const value = await this.inner.update(key, fn, options);
    this.onWrite(this.path, key, value);
    return value;
  }
  async delete(key: string): Promise<boolean> {
    const existed = await this.inner.delete(key);
    this.onWrite(this.path, key, undefined);
    return existed;
  }
  /** A handler run's staged `ctx.state` batch: not the ledger's, so not reported. */
  applyWrites(writes: readonly StoreWrite[], once?: OnceMarker): Promise<boolean> {
    // The marker must name a view of the inner store: the store writes it in the same step.
    const inner = once?.store instanceof ObservedStore ? once.store.inner : once?.store;
    return this.inner.applyWrites(writes, once && { ...once, store: inner });
  }
  async clear(): Promise<number> {
    return this.inner.clear();
  }
  namespace(name: string): StateStore {
    return new ObservedStore(this.inner.namespace(name), [...this.path, name], this.onWrite);
  }
}

/** `backend` with its writes reported to `onWrite`; durability controls pass straight through. */
function observeBackend(backend: StateBackend, onWrite: OnWrite): StateBackend {
  const root = new ObservedStore(backend, [], onWrite) as unknown as StateBackend;
  root.flush = () => backend.flush();
  root.commit = () => backend.commit();
  root.close = () => backend.close();
  if (backend.commitNow) root.commitNow = () => backend.commitNow!();
  if (backend.canCommitNow) root.canCommitNow = () => backend.canCommitNow!();
  return root;
}

/** One bot's ledger as last written: the cursor and the ids marked above it. */
interface LedgerView {
  cursor: number;
  /** By key (MARK_KEYS): the runs written under it. */
  marks: Map<string, [number, number][]>;
}

function marksOf(value: unknown): [number, number][] {
  if (typeof value !== "string" || value === "") return [];
  return value.split(",").map((run) => {
    const [from = Number.NaN, to = from] = run.split("-").map(Number);
    return [from, to];
  });
}

/** Watches every bot's delivery ledger (`<bot>/runtime`: `cursor` and MARK_KEYS) in a store. */
export class LedgerWatch {
  readonly store: StateBackend;
  readonly #views = new Map<string, LedgerView>();
  readonly #waiters = new Set<() => void>();
  /** Woken at every write to the store, whatever it writes. */
  readonly #writes = new Set<() => void>();

  constructor(backend: StateBackend) {
    this.store = observeBackend(backend, (path, key, value) => {
      for (const wake of [...this.#writes]) wake();
      if (path.length !== 2 || path[1] !== "runtime" || (key !== "cursor" && !MARK_KEYS.includes(key)))
        return;
      const view = this.#viewOf(path[0] as string);
      if (key === "cursor" && typeof value === "number") view.cursor = value;
      else if (key !== "cursor") view.marks.set(key, marksOf(value));
      for (const wake of [...this.#waiters]) wake();
    });
  }

  /** Read what the store already holds for `bot` (a state folder kept from an earlier run). */
  async load(bot: string): Promise<void> {
    const runtime = this.store.namespace(bot).namespace("runtime");
    const [cursor, ...marks] = await runtime.getMany(["cursor", ...MARK_KEYS]);
    const view = this.#viewOf(bot);
    if (typeof cursor === "number") view.cursor = Math.max(view.cursor, cursor);
    for (const [i, key] of MARK_KEYS.entries()) view.marks.set(key, marksOf(marks[i]));
  }

  /** True once `bot`'s ledger records message `id` as handled. */
  recorded(bot: string, id: number): boolean {
    const view = this.#views.get(bot);
    if (!view) return false;
    if (id <= view.cursor) return true;
    for (const runs of view.marks.values())
      if (runs.some(([from, to]) => from <= id && id <= to)) return true;
    return false;
  }

  /**
   * Resolves once `bot` recorded message `id`, and then `after` (given a signal aborted at the
   * limit) resolved true; rejects with `timeoutError()` after `timeoutMs` in all.
   */
  until(
    bot: string,
    id: number,
    timeoutMs: number,
    timeoutError: () => Error,
    after: (signal: AbortSignal) => Promise<boolean> = async () => true,
  ): Promise<void> {
    const limit = new AbortController();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        done();
        limit.abort();
        reject(timeoutError());
      }, timeoutMs);
      const wake = () => {
        if (!this.recorded(bot, id)) return;
        this.#waiters.delete(wake);
        after(limit.signal).then(
          (over) => {
            if (!over) return; // the limit passed: the timer rejected
            done();
            resolve();
          },
          (err: unknown) => {
            done();
            reject(err);
          },
        );
      };
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
      };
      this.#waiters.add(wake);
      wake();
    });
  }

  /**
   * Resolves once `check` resolves true: checked now and after each write to the store (one check
   * at a time); rejects with `timeoutError()` after `timeoutMs`.
   */
  whenTrue(check: () => Promise<boolean>, timeoutMs: number, timeoutError: () => Error): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let checking = false;
      let again = false;
      const timer = setTimeout(() => {
        done();
        reject(timeoutError());
      }, timeoutMs);
      const wake = () => {
        if (checking) {
          again = true;
          return;
        }
        checking = true;
        check().then(
          (ok) => {
            checking = false;
            if (ok) {
              done();
              resolve();
            } else if (again && this.#writes.has(wake)) {
              again = false;
              wake();
            }
          },
          (err: unknown) => {
            done();
            reject(err);
          },
        );
      };
      const done = () => {
        clearTimeout(timer);
        this.#writes.delete(wake);
      };
      this.#writes.add(wake);
      wake();
    });
  }

  #viewOf(bot: string): LedgerView {
    const view = this.#views.get(bot) ?? { cursor: -1, marks: new Map() };
    this.#views.set(bot, view);
    return view;
  }
}
