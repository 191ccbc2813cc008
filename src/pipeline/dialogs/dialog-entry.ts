/**
 * What a bot's dialogs keep in memory per dialog (dialogs.ts): enough to match a message to the
 * dialog waiting for it without a read, to tell whether a run of it is under way, and to list the
 * oldest for operators.
 */
import { raceAbort } from "../../api/sleep.ts";
import type { DeadLetterSource } from "../../state/dead-letters.ts";
import { awaited } from "./ask-options.ts";
import type { DialogHead, DialogRecord } from "./dialog-record.ts";

export class DialogEntry {
  readonly id: string;
  /** The dialog's header as last written (or read at start): who, where, which step, what was answered. */
  head: DialogHead;
  /**
   * Its deadline passed and the deadline's task is queued in its conversation: the timer reports
   * it no more. It still waits: a message matched before that task is its answer if it was sent
   * before the deadline, else late (the deadline recorded first).
   */
  due = false;
  /**
   * A run to come, holding an answer (or a passed deadline) not yet handled: just recorded, or
   * read at start. It runs before anything else of the person's there, once (`Dialogs.take`).
   */
  ready: ReadyRun | undefined = undefined;
  /** A run of the dialog is under way: its answer (or its deadline, a deletion, a move) was taken, or its ready run taken. */
  running: boolean;
  /**
   * A new dialog whose first question is being asked (`Dialogs.asking`), running until its log is
   * kept (a new entry) or its message's runs are over without it (`Dialogs.notAsking`): after a
   * handler timeout, those runs go on out of the conversation's order, and an answer waits for them.
   */
  readonly asking: boolean;
  /**
   * The end under way (asked for by an operator, a run), until it is kept (the entry goes) or
   * fails (unset): a run in flight asks nothing more, and a new dialog asked there waits for it.
   */
  ending: Promise<unknown> | undefined;
  /** Told once that run is over (the dialog waits again, is ready, was replaced or forgotten). */
  onSettled: (() => void)[] | undefined = undefined;

  constructor(head: DialogHead, asking: boolean, ending: Promise<unknown> | undefined) {
    this.id = head.id;
    this.head = head;
    this.running = asking;
    this.asking = asking;
    this.ending = ending;
  }

  /** It waits at its question, as its header says, and no run of it is under way or to come. */
  get waiting(): boolean {
    return this.head.waiting && !this.running && this.ready === undefined;
  }
}

/** A dialog's run to come (see `DialogEntry.ready`). */
export interface ReadyRun {
  readonly id: string;
  /** The record to replay; unset for a dialog read at start (or again), its log read when it runs. */
  readonly record?: DialogRecord;
  /**
   * How its answer reached the bot (`deadline` for a passed deadline; a started dialog's first
   * run: what started it), for its run's dead letter (incoming.ts `came`); unset when read at
   * start or back at a new queue (`catch-up`).
   */
  readonly came?: DeadLetterSource | undefined;
}

/** The run of `entry` is over: whoever waits for it goes on. */
export function settle(entry: DialogEntry): void {
  entry.running = false;
  const waiting = entry.onSettled;
  entry.onSettled = undefined;
  if (waiting !== undefined) for (const go of waiting) go();
}

/** Resolves true once the run of `entry` is over (at once if none is, or no entry), false if `signal` aborts first. */
export function whenSettled(entry: DialogEntry | undefined, signal: AbortSignal): Promise<boolean> {
  return entry?.running ? nextSettle(entry, signal) : Promise.resolve(true);
}

/** Resolves true the next time `entry` is settled (see {@link settle}), false if `signal` aborts first. */
export function nextSettle(entry: DialogEntry, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => resolve(false);
    signal.addEventListener("abort", onAbort, { once: true });
    entry.onSettled ??= [];
    entry.onSettled.push(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    });
  });
}

/**
 * Resolves true once an end of `entry` under way settled (kept, or failed: see `ending`) and its
 * run under way is over (at once when neither is); with `ready`, also the run its ready record
 * starts (the entry waits again, is dropped, replaced). False if `signal` aborts first. Without
 * `ready`, what a message matched to it waits for (see {@link matched}): the ready run is queued
 * behind that message's task, which holds the conversation's key.
 */
export async function whenOver(entry: DialogEntry, signal: AbortSignal, ready = false): Promise<boolean> {
  if (!(await endSettled(entry, signal))) return false;
  return ready && entry.ready !== undefined ? nextSettle(entry, signal) : whenSettled(entry, signal);
}

/**
 * Resolves true once no dialog among `entries()` that recorded message `id` as an answer has a run
 * under way or to come: the run that answer began asked its next question or ended the dialog (the
 * answer's append marks the message handled before that run). False if `signal` aborts first.
 */
export async function whenAnswerRun(
  entries: () => Iterable<DialogEntry>,
  id: number,
  signal: AbortSignal,
): Promise<boolean> {
  const toRun = (e: DialogEntry) => e.running || e.ready !== undefined;
  const busy = (e: DialogEntry) => toRun(e) && e.head.answered.includes(id);
  return untilNone(entries, busy, (e, s) => whenOver(e, s, true), signal);
}

/**
 * Resolves true once no entry among `entries()` is `busy`, each found waited for with `wait`
 * (false, as soon as a wait says `signal` aborted).
 */
async function untilNone(
  entries: () => Iterable<DialogEntry>,
  busy: (entry: DialogEntry) => boolean,
  wait: (entry: DialogEntry, signal: AbortSignal) => Promise<boolean>,
  signal: AbortSignal,
): Promise<boolean> {
  for (;;) {
    let found: DialogEntry | undefined;
    for (const entry of entries()) if (busy(entry)) found = entry;
    if (found === undefined) return true;
    if (!(await wait(found, signal))) return false;
  }
}

/**
 * Resolves true once no dialog among `entries()` waits at its question `id` (the bot's message, or
 * the refusal that asked it again): the answer taken (a press on its button has no message of its
 * own, so it is recorded under the message pressed), or its deadline, or an end; then as {@link whenAnswerRun}. A run under way that may be
 * asking it (its dialog's last question before `id`, or a new dialog's), its log not kept yet, is
 * waited for first. False if `signal` aborts first.
 */
export async function whenQuestionRun(
  entries: () => Iterable<DialogEntry>,
  id: number,
  signal: AbortSignal,
): Promise<boolean> {
  const atQuestion = (entry: DialogEntry) => {
    const { asked, btn, answered } = entry.head;
    if (answered.includes(id)) return false;
    const asking = entry.asking || (entry.running && (asked ?? 0) < id);
    return asking || ((asked === id || btn === id) && entry.waiting);
  };
  return (await untilNone(entries, atQuestion, nextSettle, signal)) && whenAnswerRun(entries, id, signal);
}

/** Resolves true once an end of `entry` under way settled, kept or failed (at once if none is), false if `signal` aborts first. */
function endSettled(entry: DialogEntry, signal: AbortSignal): Promise<boolean> {
  const ending = entry.ending;
  if (ending === undefined) return Promise.resolve(true);
  return raceAbort(ending, signal).then(
    () => true,
    () => !signal.aborted,
  );
}

/** The `limit` entries of `entries` with the smallest `since`, smallest first. */
export function oldest(entries: Iterable<DialogEntry>, limit: number): DialogEntry[] {
  const kept: DialogEntry[] = [];
  if (limit <= 0) return kept;
  for (const entry of entries) {
    const since = entry.head.startedAt;
    if (kept.length >= limit && since >= (kept[kept.length - 1] as DialogEntry).head.startedAt) continue;
    // Where it goes: after every kept entry as old or older (ties keep the order met).
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((kept[mid] as DialogEntry).head.startedAt <= since) low = mid + 1;
      else high = mid;
    }
    kept.splice(low, 0, entry);
    if (kept.length > limit) kept.pop();
  }
  return kept;
}

/** A dialog as operators see it (`bothost status`, `bothost dialogs`). */
export interface DialogView {
  id: string;
  userId: number;
  userName: string;
  where: string;
  /** The prompt it is at, from 1. */
  step: number;
  /** ISO 8601: the first question. */
  since: string;
  /** ISO 8601; undefined while an answer is being handled. */
  deadline: string | undefined;
  /** Its end is under way, not landed yet (an operator's, through a store outage): it asks nothing more. */
  ending?: true;
  /**
   * Nothing runs it (read from the store with no daemon running, or its bot stopped in the running
   * daemon), and it waits at no question: its answer (or its deadline, or its question's deletion)
   * is recorded, and the bot's next start runs it.
   */
  nextStart?: true;
  /** Who may answer the waiting question, when not the person (`a member of release-managers`). */
  awaiting?: string;
  /** The term of the bot's narrow that keeps this dialog's answers out (see daemon/stranded-dialogs.ts). */
  outsideNarrow?: string;
}

/** `entry` as operators see it. */
export function viewOf(
  entry: Pick<DialogEntry, "id" | "head" | "waiting"> & { ending?: unknown },
): DialogView {
  const { id, head, waiting } = entry;
  return {
    id,
    userId: head.userId,
    userName: head.userName,
    where: head.where,
    step: head.step + 1,
    since: new Date(head.startedAt).toISOString(),
    deadline: waiting ? new Date(head.deadline).toISOString() : undefined,
    ...(head.from && { awaiting: awaited(head.from, { id: head.userId, name: head.userName }) }),
    ...(entry.ending !== undefined && { ending: true as const }),
  };
}

/** `view` of a bot that nothing runs: one not waiting (nor ending) runs at the bot's next start. */
export function atNextStart(view: DialogView): DialogView {
  return view.deadline === undefined && !view.ending ? { ...view, nextStart: true } : view;
}

/** What a message is to the dialogs (see `Dialogs.match`). */
export type Match =
  /** The answer of the dialog waiting there: record it, then run the dialog. */
  | { entry: DialogEntry }
  /** A dialog there holds an answer not yet run: run it first, then match the message again. */
  | { ready: string }
  /**
   * A run of the dialog there is under way out of order, or an end of it (its question kept while
   * the end was written): wait for it (`whenOver`), then match again.
   */
  | { busy: DialogEntry }
  /** Sent after the waiting question's deadline: the deadline is run first, the message is ordinary. */
  | { late: DialogEntry }
  /** An answer already recorded, or the message that began a dialog kept (caught up again): handled. */
  | "duplicate"
  | undefined;

/** What a message offers to be matched. */
export interface Candidate {
  id: number;
  /** Epoch seconds, the server's stamp. */
  timestamp: number;
  /** When it reached the bot (epoch ms, the daemon's clock); undefined: when it is matched. */
  reached?: number | undefined;
}

/**
 * What `message`, from the person (or one who may answer) in the conversation where `entry`
 * waits, is to that dialog, matched at `now` (the daemon's clock). An answer takes the entry (no
 * longer waiting, its run under way).
 */
export function matched(entry: DialogEntry, message: Candidate, now: number): Match {
  const head = entry.head;
  if (head.answered.includes(message.id)) return "duplicate";
  // Ending: nothing of it runs, not even an answer or a deadline recorded while the end was tried
  // again (the end drops it); no answer is taken (a question its run kept meanwhile waits no more).
  if (entry.ending !== undefined) return { busy: entry };
  if (entry.ready !== undefined) return { ready: entry.id };
  if (entry.running) return { busy: entry };
  // Sent before the question (or before the dialog): an ordinary message.
  if (!entry.waiting || head.asked === null || message.id <= head.asked) return undefined;
  entry.running = true;
  // The deadline's run comes first.
  return lateFor(head, message, now) ? { late: entry } : { entry };
}

/**
 * Whether `message`, matched at `now`, came after the deadline of the question `head` waits at.
 * Late only when both clocks say so: it reached the bot after the deadline (the daemon's clock,
 * which keeps it; not when it is matched, as it may have waited in its conversation's queue
 * since) and was stamped after it (the server's, which may run ahead): a message caught up after
 * a restart, or one that came once the deadline's run was queued.
 */
export function lateFor(head: DialogHead, message: Candidate, now: number): boolean {
  // At the deadline's very millisecond it has passed, as for the timer that runs it.
  return (message.reached ?? now) >= head.deadline && message.timestamp * 1000 >= head.deadline;
}
