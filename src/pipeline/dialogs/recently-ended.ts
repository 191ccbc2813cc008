/**
 * The ends of a bot's dialogs as one process knows them (dialogs.ts): the ids of the dialogs it
 * saw end, the newest few thousand, so that a run still in flight asks them nothing more (beyond
 * them, the store's header refuses); and the ends under way, so that two ends at once end a
 * dialog once.
 */
import { endEntry } from "./dialog-log.ts";
import type { EndNote, EndReason, LogEntry } from "./dialog-record.ts";

/** An end being appended: `ending` resolves whether it ended the dialog. */
export interface EndUnderWay {
  by: EndReason;
  ending: Promise<boolean>;
}

export class RecentlyEnded {
  static readonly KEPT = 10_000;
  readonly #ids = new Set<string>();
  readonly #under = new Map<string, EndUnderWay>();

  /**
   * End dialog `id` as `by` says, at `at`, the person told `note`: `end` appends the entry it is
   * given (the same one through its tries) and resolves whether that ended the dialog.
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
    if (under !== undefined) return under.ending.then(() => false);
    const ending = end(endEntry(by, at, note)).finally(() => this.#under.delete(id));
    this.#under.set(id, { by, ending });
    return ending;
  }

  /** The end of `id` under way, if one is: who or what ends it, and whether it ended the dialog. */
  underWay(id: string): EndUnderWay | undefined {
    return this.#under.get(id);
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
