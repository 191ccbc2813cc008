/**
 * The end notes a bot's dialog headers keep, not said yet (end-notes.ts), as this process last
 * knew them: read at each start, added by an end with a note, marked while their send is under
 * way, dropped once said. A running daemon lists them (`bothost dialogs`, `bothost status`) as
 * the offline listing does from the store (daemon/stored-dialogs.ts).
 */
import { type DialogHead, markedSending } from "./dialog-head.ts";

/** An ended dialog's end note not said yet. */
export interface PendingNote {
  /** The ended dialog's id. */
  id: string;
  /** Its person, who is told. */
  userId: number;
  userName: string;
  /** The dialog's own conversation, where the note is said. */
  where: string;
  /** Who ended it: `operator` (`bothost dialogs end`) or `changed` (its code changed under it). */
  ended: string;
  /** When it ended. */
  endedAt: string;
  /** Its send was under way when the process stopped: the next start looks for it before saying it. */
  sending?: true;
  /**
   * The running bot is saying it now (absent in a listing read from the store): a send that
   * fails leaves it to the bot's next start.
   */
  saying?: true;
}

/** An ended dialog's header holding its note: who is told, where, and of which end. */
export function pendingNote(head: DialogHead): PendingNote {
  const { id, userId, userName, note } = head;
  return {
    id,
    userId,
    userName,
    // Said where the dialog began, though its last question may have waited elsewhere.
    where: head.home?.[1] ?? head.where,
    ended: head.ended ?? "operator",
    endedAt: new Date(note!.at).toISOString(),
    ...(note!.sending && { sending: true as const }),
  };
}

/** Oldest end first. */
export const byEnd = (a: PendingNote, b: PendingNote) => a.endedAt.localeCompare(b.endedAt);

/** The ended dialogs' headers holding a note, kept in step with the store's. */
export class PendingNotes {
  readonly #heads = new Map<string, DialogHead>();
  readonly #saying = new Set<string>();

  /** The headers a start read: those of ended dialogs holding a note are the notes. */
  read(heads: readonly DialogHead[]): void {
    this.#heads.clear();
    for (const head of heads) this.written(head);
  }

  /** A header written: kept when it is an ended dialog's holding a note, dropped otherwise. */
  written(head: DialogHead): void {
    if (head.ended !== undefined && head.note !== undefined) this.#heads.set(head.id, head);
    else this.#heads.delete(head.id);
  }

  /** Dialog `id`'s note was said (or dropped for good). */
  said(id: string): void {
    this.#heads.delete(id);
  }

  /** Dialog `id`'s note marked `sending` in its header, or unmarked. */
  marked(id: string, sending: boolean): void {
    const head = this.#heads.get(id);
    if (head?.note !== undefined) this.#heads.set(id, markedSending(head, sending));
  }

  /** Dialog `id`'s note is being said by this process (true) or no longer (false). */
  saying(id: string, now: boolean): void {
    if (now) this.#saying.add(id);
    else this.#saying.delete(id);
  }

  /** The notes not said yet, oldest end first. */
  list(): PendingNote[] {
    return [...this.#heads.values()]
      .map((head) => ({ ...pendingNote(head), ...(this.#saying.has(head.id) && { saying: true as const }) }))
      .sort(byEnd);
  }
}
