/**
 * How a dialog's run ends, as the runs (runs.ts) meet it: answered to its end, cut off by a stop,
 * or stopped because the bot's code no longer matches its log; and what the person is told when
 * a dialog ends without them (an operator's end, changed code).
 */
import type { Logger } from "pino";
import { raceAbort, timeoutSignal } from "../../api/sleep.ts";
import { EffectOrderChanged, type EffectRecord } from "../../effects/effect-records.ts";
import { BothostError } from "../../errors/bothost-error.ts";
import { StateError } from "../../state/state-error.ts";
import type { JsonValue } from "../../state/state-store.ts";
import type { BotContexts } from "../bot-contexts.ts";
import type { ConversationQueue, TaskControl } from "../conversation-queue.ts";
import type { Incoming } from "../incoming.ts";
import { RouterError } from "../router-error.ts";
import { whenSettled } from "./dialog-entry.ts";
import { DialogEnded, LogMoved } from "./dialog-log.ts";
import type { DialogRecord, EndNote, EndReason } from "./dialog-record.ts";
import type { Dialogs } from "./dialogs.ts";
import { noteOf, sayNote } from "./end-notes.ts";
import { noteOfLog, withProgresses } from "./end-progresses.ts";
import { DialogChanged, type Turn } from "./turn.ts";

/** What the person is told when the bot's code changed under their dialog (a prompt's `texts.changed`). */
export const CHANGED_NOTE =
  "Sorry, the bot was updated in the middle of our conversation: please start again.";

/** The log line of a dialog's run that found its dialog ended (an operator's end) while under way. */
export const ENDED_MEANWHILE = "the dialog was ended while its run was under way: the run stopped there";

/** The log line of a dialog's run whose question the log refused: another instance's run kept its own first. */
const RUN_ELSEWHERE =
  "another instance runs this dialog (the log kept that instance's question first): this run stopped there";

/**
 * True (logged) when `err`, what a run's question met, is the log's refusal as moved: another
 * instance ran the same answer (a rolling deploy: old and new code both up) and its question was
 * kept first. No failure of the dialog, nor an end: it goes on at the question its log holds (its
 * entry read again from the store), and this run stops there. Its own question, already sent,
 * stays: the person's answer answers the question the log holds.
 */
export function ranElsewhere(log: Logger, err: unknown): boolean {
  if (!(err instanceof LogMoved)) return false;
  log.info({ dialog: err.dialog }, RUN_ELSEWHERE);
  return true;
}

/** What a run of a dialog needs to end it. */
export interface DialogEndParts {
  dialogs: Dialogs;
  contexts: BotContexts;
  log: Logger;
}

/**
 * How long an operator's end waits for a dialog's first question to be sent and recorded: with
 * the end's own tries (about 2 s), within the 10 s `bothost dialogs end` waits for its answer.
 */
export const FIRST_QUESTION_WAIT_MS = 5_000;

/**
 * How long an operator waits for an end's write to land (its tries included): with
 * {@link FIRST_QUESTION_WAIT_MS}, within the 10 s `bothost dialogs end` waits. Past it (the store
 * down, failing or not answering) the operator is told the end is under way: it is tried until
 * the store takes it.
 */
export const END_WRITE_WAIT_MS = 3_000;

/** The log line of an operator's end whose write had not landed in time. */
export const END_UNANSWERED =
  "an operator's end has not landed in time (the state store is down or not answering): it is tried until the store takes it";

/**
 * The log line of an operator's end answered pending that the bot's stop here cut off before it
 * was confirmed: the next start reads the dialog's log and finds it landed (the note is said then)
 * or not (the dialog goes on, and the operator runs the end again).
 */
export const END_UNCONFIRMED =
  "an operator's end was not confirmed before the bot stopped here: the next start finds whether it landed (the person is told then) or not (the dialog goes on: run bothost dialogs end again)";

/** The log line of an operator's end refused because the dialog's first question was not recorded in time. */
export const END_TOO_EARLY =
  "an operator's end was refused: the dialog's first question was not recorded in time (nothing was ended)";

/**
 * An operator ends dialog `id`: an end entry closes its log at once (a run in flight asks
 * nothing more), and the person is told `note` in the conversation's order, after what a run in
 * flight says and before what comes there while the end is under way (it waits for the end).
 * While the store fails the end is tried again, the same entry each time, until it lands or the
 * bot stops (`Dialogs.end`): one that landed with its reply lost is found made and finished once,
 * and the dialog is ending meanwhile. Not landed within {@link END_WRITE_WAIT_MS}, it rejects with
 * `DIALOG_END_PENDING` and goes on; asked again meanwhile, it answers as that end does (nothing
 * read or written again). False when there is no such dialog (one whose first question
 * was not kept). One whose first question is still being sent or recorded is waited for, at most
 * {@link FIRST_QUESTION_WAIT_MS}; then the end is refused (`DIALOG_STARTING`), nothing made. The
 * dialog's log not read within {@link END_WRITE_WAIT_MS}, it rejects with `STATE_UNAVAILABLE`,
 * nothing made. Made while the bot is stopped (or stopping), the note is not said here: the next
 * start says it.
 */
export async function endByOperator(
  o: DialogEndParts & { queue: ConversationQueue },
  id: string,
  note: string,
): Promise<boolean> {
  const { dialogs, queue, contexts, log } = o;
  // Asked again while an operator's end is under way (the store failing it): answered as that end
  // is. Ending on its own (its run's end, its failure, changed code), no note is said: once that
  // end lands there is no dialog to end.
  const under = dialogs.endUnderWay(id);
  if (under?.by === "operator") return settledWithin(under.ending, contexts, id);
  if (under !== undefined)
    return settledWithin(
      under.ending.then(() => false),
      contexts,
      id,
      { own: under.by },
    );
  // Its first question being sent or written, the dialog has no log yet: the end waits for it
  // (kept, the dialog is ended; given up, it never began), a bounded time: past it the end is
  // refused and never made, so that the operator is not told of a failure the end then belies.
  const begun = dialogs.entry(id);
  if (begun?.head.seq === 0) {
    const limit = timeoutSignal(contexts.clock, FIRST_QUESTION_WAIT_MS);
    const settled = await whenSettled(begun, limit.signal);
    limit.clear();
    if (!settled) {
      log.warn({ dialog: id }, END_TOO_EARLY);
      throw new BothostError(
        "DIALOG_STARTING",
        `dialog ${id}'s first question is still being sent or recorded after ${FIRST_QUESTION_WAIT_MS / 1000} s (the server or the state store is slow or failing): nothing was ended; run this again once bothost dialogs shows the dialog's deadline`,
      );
    }
  }
  // In its conversation's order from here, before its record is read: what comes there meanwhile
  // (an answer, a new request of the person's) waits for the end, and is said after its note (the
  // stop's deadline left, the next start says it). An answer taken during the read would be missed
  // by the record the end keeps (the progresses its run opened: end-progresses.ts).
  const turn = inOrder(queue, dialogs.entry(id)?.head.conversation);
  // A store that answers nothing (a hung Redis) is not waited on past the operator's patience:
  // nothing is begun until the record is read.
  const unread = () =>
    new StateError(
      "STATE_UNAVAILABLE",
      `the state store has not answered the read of dialog ${id}'s log within ${END_WRITE_WAIT_MS / 1000} s (it is down or not answering): nothing was ended; run this again once it answers`,
    );
  const reading = timeoutSignal(contexts.clock, END_WRITE_WAIT_MS, unread);
  let record: DialogRecord | undefined;
  try {
    record = await raceAbort(dialogs.record(id), reading.signal);
  } finally {
    reading.clear();
    if (record === undefined) turn.release(undefined);
  }
  if (record === undefined) return false;
  // The note is part of the end's entry: its header keeps it until it is said (end-notes.ts),
  // with the progresses the dialog's runs left open as the log the end goes after holds them,
  // ended then (end-progresses.ts).
  const told = noteOfLog(contexts, record, noteOf(contexts, record, note));
  // The bot stopped here (its lease lost, or stopping): the header keeps the note, and the bot's
  // next start (here, or on the instance that takes it) says it, once (`DialogEngine.open`).
  const stopped = dialogs.untilStop.aborted;
  const ending = dialogs.end(id, "operator", dialogs.untilStop, told.note, told);
  const noted = async (c: TaskControl) =>
    (await raceAbort(ending, c.signal).catch(() => false)) &&
    !stopped &&
    told.note &&
    sayNote(o, record, told.note, c.signal);
  if (turn.key === record.conversation) turn.release(noted);
  else {
    turn.release(undefined);
    queue.push(record.conversation, (c) => c.holdKey(noted(c)));
  }
  return settledWithin(ending, contexts, id, {
    late: () => {
      // Told it is under way, the operator learns from the log if the stop cuts it off (another
      // writer's move or an end already made is no loss: the dialog is run, or ended, elsewhere).
      ending.catch((reason: unknown) => {
        if (!(reason instanceof DialogEnded || reason instanceof LogMoved))
          log.warn({ dialog: id }, END_UNCONFIRMED);
      });
      log.warn({ dialog: id }, END_UNANSWERED);
    },
  });
}

/** What a dialog's own end is, said to an operator who asked to end it meanwhile. */
const OWN_END: Record<Exclude<EndReason, "operator">, string> = {
  handler: "its run came to its end",
  failed: "its run failed",
  changed: "its code changed",
  stopped: "it was stopped",
};

/**
 * `ending`'s outcome, an operator's end of dialog `id` (or, `own`, the dialog's own end under way
 * when the operator asked), if it settles within {@link END_WRITE_WAIT_MS}; else
 * `DIALOG_END_PENDING` (after `late`).
 */
async function settledWithin(
  ending: Promise<boolean>,
  contexts: BotContexts,
  id: string,
  o: { late?: () => void; own?: EndReason } = {},
): Promise<boolean> {
  const limit = timeoutSignal(contexts.clock, END_WRITE_WAIT_MS);
  try {
    return await raceAbort(ending, limit.signal);
  } catch (err) {
    if (!limit.signal.aborted) throw err;
    o.late?.();
    const storeSlow = `within ${END_WRITE_WAIT_MS / 1000} s (the state store is down, failing or not answering)`;
    throw new BothostError(
      "DIALOG_END_PENDING",
      o.own !== undefined && o.own !== "operator"
        ? `dialog ${id} was already ending (${OWN_END[o.own]}) and that end has not landed ${storeSlow}: it is tried until the store takes it, and no operator's note is said; meanwhile the dialog asks nothing more. Once it lands, bothost dialogs no longer lists it`
        : `dialog ${id}'s end has not landed ${storeSlow}: the end is under way and is tried until the store takes it; meanwhile the dialog asks nothing more. Once it lands, the person is told and bothost dialogs no longer lists it. Should the bot stop here first, the daemon logs it, and its next start finds whether the end landed: if the dialog is listed again, run this again`,
    );
  } finally {
    limit.clear();
  }
}

/**
 * A task in conversation `key` (none without one), queued now, that holds it until `release`
 * gives it what to do there (undefined: nothing).
 */
function inOrder(queue: ConversationQueue, key: string | undefined) {
  let release: (task: ((c: TaskControl) => Promise<unknown>) | undefined) => void = () => {};
  if (key !== undefined) {
    const task = new Promise<((c: TaskControl) => Promise<unknown>) | undefined>((r) => {
      release = r;
    });
    // Cut by the stop's deadline as the end's own task is (its note left to the next start).
    const run = (c: TaskControl) =>
      raceAbort(task, c.signal).then(
        (then) => then?.(c),
        () => undefined,
      );
    queue.push(key, (c) => c.holdKey(run(c)));
  }
  return { key, release: (then: ((c: TaskControl) => Promise<unknown>) | undefined) => release(then) };
}

/** A message's run returned: the dialog it ran is over (its end entry appended, the key held meanwhile). */
export function endDialog(o: DialogEndParts, control: TaskControl, incoming: Incoming, by: EndReason): void {
  const closing = closeRuns(o, incoming, by, control);
  if (closing) control.holdKey(closing);
}

/**
 * The runs of `incoming` are over, none parked: a dialog they ran is over (`by`); a new dialog
 * their prompt asked for and did not keep is not begun (see `Dialogs.asking`). `source.signal` is
 * read only to close a dialog: a task's signal is made on first read, and most runs end no dialog.
 */
export function closeRuns(
  o: DialogEndParts,
  incoming: Incoming,
  by: EndReason,
  source: { signal: AbortSignal },
) {
  if (incoming.dialog) return closeLog(o, incoming.dialog.id, by, source.signal);
  const { event } = incoming;
  if (o.dialogs.size > 0 && event.type === "message")
    o.dialogs.notAsking(String((event as { message: { id: number } }).message.id));
  return undefined;
}

/**
 * Append a dialog's end (`note`: what its person is told of it, kept with it until said), tried
 * again while the store fails (a write refused, or one that landed with its reply lost), as an
 * answer's is: the person's later messages there wait for it, then are ordinary. Only `signal`
 * (the stop) ends the tries; a failure is then logged, and the next start runs the dialog again.
 * Resolves whether this end ended the dialog.
 */
function closeLog(
  o: DialogEndParts,
  id: string,
  by: EndReason,
  signal: AbortSignal,
  note?: EndNote,
): Promise<boolean> {
  return o.dialogs.end(id, by, signal, note).catch((err: unknown) => {
    o.log.error({ err, dialog: id }, "could not record a dialog's end");
    return false;
  });
}

/**
 * A message's run threw what only a dialog's run meets: cut off by a stop, ended meanwhile, or
 * code changed under its log (its end tried again until `signal`, the stop). Returns what the key
 * must wait for: the run's progresses ended as failed (`run.end`, end-progresses.ts), ended or
 * changed, before the note; true when they are left as they are (cut off: the run goes on at the
 * next start), or false for any other failure (retried as usual). `run.kept`: the run's effect
 * records (its log's and its own).
 */
export function dialogFailed(
  o: DialogEndParts,
  incoming: Incoming,
  log: Logger,
  turn: Turn | undefined,
  err: unknown,
  signal: AbortSignal,
  run: { kept(): readonly EffectRecord[] | undefined; end(): Promise<void>; againWhere: string },
): Promise<unknown> | true | false {
  const dialog = incoming.dialog;
  const asked = dialog !== undefined || (turn !== undefined && turn.step > 0);
  if (err instanceof DialogEnded) {
    log.info({ dialog: dialog?.id }, ENDED_MEANWHILE);
    // Nothing to wait for but its progresses: ones it opened are in no log the end read, and it is
    // before the end's note in its conversation.
    return run.end();
  }
  if (asked && incoming.letter === undefined && err instanceof RouterError && err.code === "ROUTER_ABORTED") {
    // Left as a crash leaves it: its message is caught up again (or its log, holding the answer,
    // is replayed) at the next start, in its place among the person's messages.
    log.info(
      { dialog: dialog?.id },
      `a dialog's run was cut off by the stop: it runs again ${run.againWhere}`,
    );
    return true;
  }
  if (dialog === undefined || !(err instanceof DialogChanged || err instanceof EffectOrderChanged))
    return false;
  // Stopped, and the person told, rather than file an answer under another question.
  const step = err instanceof DialogChanged ? err.step : (turn?.step ?? 0) + 1;
  log.warn(
    { dialog: dialog.id, user: dialog.userName, userId: dialog.userId, step, reason: err.message },
    "the bot's code no longer matches this dialog (changed since it began): the dialog was stopped",
  );
  // Kept with the end until said, as an operator's note is (end-notes.ts), with the progresses the
  // run's records hold (its log's and its own): a crash before they end, or before the note's
  // send, leaves them to the next start. The run ends those it has open first, then the note.
  const text = (err instanceof DialogChanged ? err.note : undefined) ?? CHANGED_NOTE;
  const effects = (run.kept() ?? []) as unknown as JsonValue[];
  const note = withProgresses(o.contexts, { ...dialog, effects }, noteOf(o.contexts, dialog, text));
  return closeLog(o, dialog.id, "changed", signal, note).then(async (ended) => {
    await run.end();
    if (ended && note) await sayNote(o, dialog, note, signal);
  });
}
