/**
 * The ends of a bot's dialogs as one process knows them (dialogs.ts): the ids of the dialogs it
 * saw end, the newest few thousand, so that a run still in flight asks them nothing more (beyond
 * them, the store's header refuses); the ends under way, so that two ends at once end a dialog
 * once; and the ends in doubt. An end whose write failed with its outcome unknown (a store outage,
 * a write that landed and lost its reply) leaves its entry here, and the next end of that dialog
 * by the same hand (the run's next try, the operator's) appends that very entry: the log finds
 * the append made if the first one landed (dialog-log.ts), so the dialog ends once.
 */
import { DialogEnded, endEntry, LogMoved } from "./dialog-log.ts";
import type { EndNote, EndReason, LogEntry } from "./dialog-record.ts";

export class RecentlyEnded {
  static readonly KEPT = 10_000;
  readonly #ids = new Set<string>();
  readonly #under = new Map<string, Promise<boolean>>();
  /** The end entries of ends in doubt, by dialog id (dropped once settled; the newest few thousand). */
  readonly #unsure = new Map<string, LogEntry>();

  /**
   * End dialog `id` as `by` says, at `at`, the person told `note` (or as an end of `id` by `by`
   * left in doubt was, its note kept): `end` appends the entry it is given and resolves whether
   * that ended the dialog.
   * Unless an end of `id` is under way (two operators at once, a request retried): then resolve
   * false once that one is done, as the same end appended twice would land as one, and both
   * would say they ended it.
   */
  once(
    id: string,
    by: EndReason,
    at: number,
    end: (entry: LogEntry) => Promise<boolean>,
    note?: EndNote,
  ): Promise<boolean> {
    const under = this.#under.get(id);
    if (under !== undefined) return under.then(() => false);
    const unsure = this.#unsure.get(id);
    const entry = unsure?.t === "end" && unsure.by === by ? unsure : endEntry(by, at, note);
    const ending = end(entry)
      .then(
        (ended) => {
          this.#unsure.delete(id);
          return ended;
        },
        (err: unknown) => {
          // Refused for good (ended otherwise, or the log moved): nothing left in doubt.
          if (err instanceof DialogEnded || err instanceof LogMoved) this.#unsure.delete(id);
          else if (this.#unsure.set(id, entry).size > RecentlyEnded.KEPT)
            this.#unsure.delete(this.#unsure.keys().next().value as string);
          throw err;
        },
      )
      .finally(() => this.#under.delete(id));
    this.#under.set(id, ending);
    return ending;
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  delete(id: string): void {
    this.#ids.delete(id);
  }

  add(id: string): void {
    this.#ids.add(id);
    if (this.#ids.size > RecentlyEnded.KEPT) this.#ids.delete(this.#ids.values().next().value as string);
  }
}
