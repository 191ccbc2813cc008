/**
 * Operators' ends left in doubt (every try failed, the first may have landed: see endByOperator
 * in dialog-ends.ts), settled by the next thing that touches the dialog, which reads its log: the
 * person's next message there, the question's deadline, a run under way saying anything (its header
 * read before the run's next send: ended by the operator, nothing more is sent) or ending
 * (an append the log takes means the end did not land: the dialog goes on as it was; one it
 * refuses as ended means it did: the note is said, once). Kept in memory; the next start of the
 * bot reads the headers instead: an end that landed keeps its note in the dialog's header until
 * it is said (end-notes.ts).
 */
import { DialogEnded } from "./dialog-log.ts";
import type { DialogHead, DialogRecord } from "./dialog-record.ts";

/** An end in doubt: the record read before it (its log is gone once it lands), and how its note is said. */
export interface EndInDoubt {
  record: DialogRecord;
  /** Says the operator's note to the person, in the conversation's order. */
  tell(): void;
  /** The read of the dialog's header that settles it, while under way (shared by whoever asks meanwhile). */
  reading?: Promise<boolean>;
}

/** How many ends in doubt a bot keeps: the oldest is dropped past it. */
const KEPT = 1_000;

export class EndsInDoubt {
  readonly #kept = new Map<string, EndInDoubt>();
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

  /** A start reads every dialog's header: they settle every end in doubt (dialogs.ts). */
  clear(): void {
    this.#kept.clear();
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

  /**
   * `read`, dialog `id`'s header read now, settles an end of it in doubt: ended by an operator, it
   * landed; still going, it did not. Resolves whether the dialog ended (or its log is gone); false
   * at once when no end of it is in doubt. Asked while a read is under way, that read answers.
   */
  settledByHead(id: string, read: () => Promise<DialogHead | undefined>): Promise<boolean> {
    const doubt = this.#kept.get(id);
    if (doubt === undefined) return Promise.resolve(false);
    doubt.reading ??= read().then(
      (head) => {
        if (head?.ended === "operator") this.landed(id);
        else this.missed(id);
        return head === undefined || head.ended !== undefined;
      },
      (err: unknown) => {
        doubt.reading = undefined;
        throw err;
      },
    );
    return doubt.reading;
  }

  /**
   * What each effect of a run of dialog `id` waits for (a send, above all): an end of it in doubt
   * settled first by `ended` (its header read, once for all). Once that shows the dialog ended,
   * every effect of the run is refused with {@link DialogEnded}: the run says nothing more, and the
   * note is said after it. Nothing to wait for (undefined) while no end of it is in doubt.
   */
  gate(id: string, ended: () => Promise<boolean>): () => Promise<void> | undefined {
    let over = false;
    return () => {
      if (!over && !this.#kept.has(id)) return undefined;
      return (over ? Promise.resolve(true) : ended()).then((yes) => {
        over = yes;
        if (yes) throw new DialogEnded(id);
      });
    };
  }

  /** Dialog `id`'s log took an append after its end in doubt: that end did not land, the dialog goes on. */
  missed(id: string): void {
    this.#kept.delete(id);
  }

  /**
   * Dialog `id`'s log was found ended: an end of it in doubt landed, and its note is said now
   * (stopped, at the bot's next start, from the header).
   */
  landed(id: string): void {
    const doubt = this.take(id);
    if (doubt !== undefined && this.#armed) doubt.tell();
  }

  /** The bot runs: a note found landed is said. */
  arm(): void {
    this.#armed = true;
  }

  /** The bot stops: a note found landed waits in the header for its next start. */
  pause(): void {
    this.#armed = false;
  }
}
