/**
 * Where a bot's dialogs live in its store (`<bot>/dialogs`): per dialog a small header
 * (`h:<id>`, what a start reads) and its log, one key per append (`e:<id>:<n>`, the entries it
 * added; read only when the dialog runs, by their keys, in one read). Every append is one atomic
 * batch: its entries and the header, checked (the log is where the writer left it, and not
 * ended) and naming the append it holds last, so that a retry of the same append finds it made.
 * A write that landed but whose reply was lost is known on the retry, and an end is final: the
 * header refuses every later append. The header's write says what the writer expects it to
 * hold, so that a networked store makes the append without reading it first.
 */
import { createHash } from "node:crypto";
import { BothostError } from "../../errors/bothost-error.ts";
import type { JsonValue, StateStore, StoreWrite } from "../../state/state-store.ts";
import { markedSending } from "./dialog-head.ts";
import {
  asHead,
  type DialogHead,
  type DialogRecord,
  type EndNote,
  type EndReason,
  foldLog,
  headAfter,
  headOf,
  type LogEntry,
} from "./dialog-record.ts";
import { migrateV1 } from "./dialog-v1.ts";
import { PendingNotes } from "./pending-notes.ts";

/**
 * How long an ended dialog's header stays, refusing a late run's append: from its end, or, when
 * the end has a note, from when the note was said (until then it stays, however long that takes).
 */
export const ENDED_KEPT_MS = 7 * 86_400_000;

/**
 * What an end's note takes from its dialog's log (the progresses its runs left open:
 * end-progresses.ts), made for the log the end goes after, as it stands then: `record`, the log
 * it was last made for (a run's question kept meanwhile is in the next one).
 */
export interface NoteOfLog {
  record: DialogRecord;
  /** `end` with its note made for the log `record` holds (the same log, the same entry); `record` kept. */
  remake(record: DialogRecord, end: LogEntry): LogEntry;
}

/** An append to a dialog that has ended (by an operator, its handler, changed code). */
export class DialogEnded extends BothostError<"DIALOG_ENDED"> {
  override readonly name = "DialogEnded";
  constructor(id: string) {
    super("DIALOG_ENDED", `dialog ${id} has ended: nothing more is recorded for it.`);
  }
}

/** An append whose log moved since the writer read it (another instance wrote it). */
export class LogMoved extends BothostError<"DIALOG_LOG_MOVED"> {
  override readonly name = "LogMoved";
  /** The dialog's id. */
  readonly dialog: string;
  constructor(id: string) {
    super("DIALOG_LOG_MOVED", `dialog ${id}'s log changed under its writer.`);
    this.dialog = id;
  }
}

const headKey = (id: string) => `h:${id}`;
const entryKey = (id: string, n: number) => `e:${id}:${String(n).padStart(6, "0")}`;
const text = (value: unknown) => JSON.stringify(value);
/** An append that begins a log: a new dialog's (true), or a dead letter's dialog's again ("reopen"). */
type Create = boolean | "reopen";
/** The keys a log holds: one per append (or, as logs were first kept, per entry). */
const appended = (head: DialogHead) => head.n ?? head.seq;

export class DialogLog {
  readonly #store: StateStore;
  readonly #commit: () => Promise<void>;
  /** The ended dialogs' notes not said yet, as this process last wrote or read their headers. */
  readonly notes = new PendingNotes();

  constructor(store: StateStore, commit: () => Promise<void>) {
    this.#store = store;
    this.#commit = commit;
  }

  /**
   * Every dialog's header (a start reads these, never the logs): the ongoing dialogs', and the
   * ended ones' whose note (`note`) is not known to be said. `seen` gets the id of every header
   * found, ended ones' included.
   */
  async heads(seen?: Set<string>): Promise<DialogHead[]> {
    await migrateV1(this.#store, (head, entries, record) =>
      this.append(head, entries, true, [{ op: "delete", key: record }]),
    );
    const heads: DialogHead[] = [];
    for (const { value } of await this.#store.list("h:")) {
      const head = asHead(value);
      if (head !== undefined) seen?.add(head.id);
      if (head !== undefined && (head.ended === undefined || head.note !== undefined)) heads.push(head);
    }
    this.notes.read(heads);
    return heads;
  }

  /** Ended dialog `id`'s note was said: its header holds it no more, and is kept {@link ENDED_KEPT_MS} from now. */
  async noteSaid(id: string): Promise<void> {
    await this.#changeNote(id, ({ note, ...rest }) => rest, ENDED_KEPT_MS);
    this.notes.said(id);
  }

  /**
   * Ended dialog `id`'s note, while its header keeps it, is marked `sending` (before its send: it
   * may go out) or not (its send certainly did not reach the server). Resolves whether the header
   * keeps the note (false: said already, or the header gone).
   */
  async noteSending(id: string, sending: boolean): Promise<boolean> {
    const kept = await this.#changeNote(id, (head) => markedSending(head, sending));
    if (kept) this.notes.marked(id, sending);
    else this.notes.said(id);
    return kept;
  }

  /**
   * Ended dialog `id`'s note, while its header keeps it, carries `progress` (the progresses a run
   * stopped by the end left open: end-progresses.ts) in place of what it carried (the run's
   * records hold those of its dialog's log, which the end read, and its own). Resolves whether the
   * header kept them (false: the dialog not ended, or its note said already).
   */
  noteProgress(id: string, progress: JsonValue): Promise<boolean> {
    return this.#changeNote(id, (head) =>
      head.ended === undefined ? undefined : { ...head, note: { ...head.note, progress } },
    );
  }

  /**
   * Dialog `id`'s header, while it keeps a note, as `change` makes it (undefined: left as it is),
   * written and committed (`ttlMs`: kept that long from now, changed or not). Resolves whether it
   * was changed.
   */
  async #changeNote(
    id: string,
    change: (head: DialogHead & { note: EndNote }) => DialogHead | undefined,
    ttlMs?: number,
  ): Promise<boolean> {
    let changed = false;
    const fn = (current: JsonValue | undefined) => {
      const head = asHead(current);
      const next = head?.note === undefined ? undefined : change(head as DialogHead & { note: EndNote });
      changed = next !== undefined;
      return next === undefined ? current : (next as unknown as JsonValue);
    };
    await this.#store.applyWrites([
      { op: "update", key: headKey(id), fn, ...(ttlMs !== undefined && { ttlMs }) },
    ]);
    await this.#commit();
    return changed;
  }

  /** The header of dialog `id` as the store holds it. */
  async head(id: string): Promise<DialogHead | undefined> {
    return asHead(await this.#store.get(headKey(id)));
  }

  /** Dialog `id`'s log, folded over `head` (one store read). */
  async read(head: DialogHead) {
    return foldLog(head, await this.entries(head));
  }

  /** The entries of the log `head` describes, in order (one store read). */
  async entries(head: DialogHead): Promise<LogEntry[]> {
    const keys = Array.from({ length: head.n ?? head.seq }, (_, i) => entryKey(head.id, i));
    const entries: LogEntry[] = [];
    for (const value of await this.#store.getMany(keys)) {
      if (Array.isArray(value)) entries.push(...(value as unknown as LogEntry[]));
      else if (value !== undefined) entries.push(value as unknown as LogEntry);
    }
    return entries.slice(0, head.seq);
  }

  /**
   * Append `entries` to the log that `head` describes (the header as this writer last knew it;
   * `create`: the dialog is new, its header must not exist). Resolves the new header; the same
   * append retried after a lost reply resolves it too. Rejects with {@link DialogEnded} after an
   * end, {@link LogMoved} when another writer got there first. `also`: writes made in the same
   * batch (an older version's record deleted as its log is begun).
   */
  async append(
    head: DialogHead,
    entries: readonly LogEntry[],
    create: Create = false,
    also: readonly StoreWrite[] = [],
  ): Promise<DialogHead> {
    const added = text(entries);
    const bytes = added.length;
    const next = headAfter(head, entries, bytes);
    next.last = createHash("sha256").update(`${head.seq}\n${added}`).digest("base64url").slice(0, 16);
    const header: StoreWrite = {
      op: "update",
      key: headKey(head.id),
      fn: (current) => this.#checked(head, current, create, next),
      ...(create !== "reopen" && { expect: create ? null : text(headOf(head)) }),
    };
    const writes: StoreWrite[] = [header, { op: "set", key: entryKey(head.id, appended(head)), text: added }];
    // A log begun again keeps no expiry of its ended header's.
    if (create === "reopen") writes.push({ op: "set", key: headKey(head.id), text: text(next) });
    if (next.ended !== undefined) {
      // An ended dialog keeps only its header, for a while: enough to refuse a late append. One
      // with a note keeps it until the note is said (a bot down for weeks says it at its start).
      if (next.note === undefined) writes[0] = { ...header, ttlMs: ENDED_KEPT_MS };
      writes.length = 1;
      for (let n = 0; n < appended(head); n++) writes.push({ op: "delete", key: entryKey(head.id, n) });
    }
    writes.push(...also);
    await this.#store.applyWrites(writes);
    await this.#commit();
    this.notes.written(next);
    // Kept in memory while the dialog waits, as a restart reads it back: parsed from its text, its
    // strings flat (not slices of the hash, nor the pieces the place's name was joined from).
    return JSON.parse(text(next)) as DialogHead;
  }

  /**
   * Append `end` to dialog `id`'s log, after `head` (the header its writer knew; read when
   * undefined): a run's append that landed after that header is read, and the end goes after
   * it; `logged`: its note made for the log it goes after (read then, when not `logged.record`).
   * Resolves false when the dialog had ended already (or never began).
   */
  async close(id: string, head: DialogHead | undefined, end: LogEntry, logged?: NoteOfLog): Promise<boolean> {
    head ??= await this.head(id);
    for (let tries = 1; head !== undefined && head.ended === undefined; tries++) {
      try {
        let entry = end;
        if (logged !== undefined) {
          const { seq, last } = logged.record;
          const same = seq === head.seq && last === head.last;
          entry = logged.remake(same ? logged.record : await this.read(head), end);
        }
        await this.append(head, [entry]);
        return true;
      } catch (err) {
        if (!(err instanceof LogMoved || err instanceof DialogEnded) || tries === 3) throw err;
        head = await this.head(id);
      }
    }
    return false;
  }

  /**
   * Begin the log of dialog `record` (a dead letter's) again from it, in one entry: its log was
   * ended as failed when the letter was kept (or has expired since). Rejects with
   * {@link LogMoved} when the dialog went on without the letter, {@link DialogEnded} when it
   * ended otherwise.
   */
  reopen(record: DialogRecord, at: number): Promise<DialogHead> {
    const { ended, last, ...head } = headOf(record);
    const begun = { ...head, seq: 0, n: 0, bytes: 0, waiting: false };
    return this.append(begun, [{ t: "carried", record: carriedOf(record), at }], "reopen");
  }

  #checked(head: DialogHead, current: JsonValue | undefined, create: Create, next: DialogHead): JsonValue {
    const stored = asHead(current);
    // This very append, made by an earlier try whose reply was lost: nothing changes.
    if (stored !== undefined && stored.seq === next.seq && stored.last === next.last)
      return current as JsonValue;
    if (create === "reopen" && (stored === undefined || stored.ended === "failed"))
      return next as unknown as JsonValue;
    if (stored?.ended !== undefined) throw new DialogEnded(head.id);
    if (create ? stored !== undefined : stored === undefined || stored.seq !== head.seq)
      throw stored === undefined && !create ? new DialogEnded(head.id) : new LogMoved(head.id);
    return next as unknown as JsonValue;
  }
}

/** `end` as the log's last entry (`note`: what the person is told of it). */
export function endEntry(by: EndReason, at: number, note?: EndNote): LogEntry {
  return note === undefined ? { t: "end", by, at } : { t: "end", by, at, note };
}

/** What a `carried` entry keeps of `record`: all but its header. */
function carriedOf(record: DialogRecord): JsonValue {
  const { origin, steps, values, names, effects, nested, rewinds, rewound, moves } = record;
  const kept = {
    origin,
    steps,
    values,
    names,
    effects,
    rewinds,
    ...(nested && { nested }),
    ...(rewound && { rewound }),
    ...(moves && { moves }),
  };
  return kept as unknown as JsonValue;
}
