/**
 * Operators' ends left in doubt (every try failed, the first may have landed: see endByOperator
 * in dialog-ends.ts), settled by the next thing that touches the dialog, which reads its log: the
 * person's next message there, the question's deadline, a run under way asking again or ending
 * (an append the log takes means the end did not land: the dialog goes on as it was; one it
 * refuses as ended means it did: the note is said, once), or the next start of the bot (its
 * header read). Kept in memory: a new process knows of none.
 */
import { DialogEnded } from "./dialog-log.ts";
import type { DialogRecord } from "./dialog-record.ts";

/** An end in doubt: the record read before it (its log is gone once it lands), and how its note is said. */
export interface EndInDoubt {
  record: DialogRecord;
  /** Says the operator's note to the person, in the conversation's order. */
  tell(): void;
}

/** How many ends in doubt a bot keeps: the oldest is dropped past it. */
const KEPT = 1_000;

export class EndsInDoubt {
  readonly #kept = new Map<string, EndInDoubt>();
  /** Found landed while the bot was stopped: their notes are said at its next start. */
  readonly #landed: EndInDoubt[] = [];
  #armed = false;

  /** The end of dialog `id` is in doubt. */
  keep(id: string, doubt: EndInDoubt): void {
    this.#kept.delete(id);
    if (this.#kept.set(id, doubt).size > KEPT) this.#kept.delete(this.#kept.keys().next().value as string);
  }

  /** The end in doubt of dialog `id`, taken (the operator runs it again). */
  take(id: string): EndInDoubt | undefined {
    const doubt = this.#kept.get(id);
    this.#kept.delete(id);
    return doubt;
  }

  /**
   * At a start, with every dialog's header read: an end in doubt of a dialog still `listed` did not
   * land; one whose header says an operator ended it (`endedBy`) did.
   */
  async settleAtStart(
    listed: (id: string) => boolean,
    endedBy: (id: string) => Promise<string | undefined>,
  ): Promise<void> {
    for (const id of [...this.#kept.keys()]) {
      if (!listed(id) && (await endedBy(id)) === "operator") this.landed(id);
      else this.missed(id);
    }
  }

  /**
   * `write`, an append to dialog `id`'s log (or an end of it, resolving false when it had ended),
   * settles an end of it in doubt: taken, that end did not land; refused as ended, it did.
   */
  settledBy<T>(id: string, write: Promise<T>): Promise<T> {
    return write.then(
      (done) => {
        if (done === false) this.landed(id);
        else this.missed(id);
        return done;
      },
      (err: unknown) => {
        if (err instanceof DialogEnded) this.landed(id);
        throw err;
      },
    );
  }

  /** Dialog `id`'s log took an append after its end in doubt: that end did not land, the dialog goes on. */
  missed(id: string): void {
    this.#kept.delete(id);
  }

  /** Dialog `id`'s log was found ended: an end of it in doubt landed, and its note is said now (or at the next start). */
  landed(id: string): void {
    const doubt = this.take(id);
    if (doubt === undefined) return;
    if (this.#armed) doubt.tell();
    else this.#landed.push(doubt);
  }

  /** The bot runs: the notes of ends found landed while it was stopped are said. */
  arm(): void {
    this.#armed = true;
    for (const doubt of this.#landed.splice(0)) doubt.tell();
  }

  /** The bot stops: notes wait for its next start. */
  pause(): void {
    this.#armed = false;
  }
}
