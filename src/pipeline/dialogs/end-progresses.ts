/**
 * The progresses (`ctx.progress`) a dialog's runs left open when an operator ends the dialog: no
 * handler runs again to end them, so the end's note carries what ends them (their first posts'
 * records, from the dialog's log, which the end deletes) and they end as failed when the note is
 * said (end-notes.ts): after the end is kept, in the conversation's order. The header keeps the
 * note until both are done, so a restart (or a kill) before then ends them at the next start,
 * their steps made before found recorded and not made again.
 */
import type { Logger } from "pino";
import { callLaneOf, laneOf } from "../../api/budget-line.ts";
import { type ServerInfo, serverInfoFrom } from "../../api/server-info.ts";
import { raceAbort, timeoutSignal } from "../../api/sleep.ts";
import type { EffectRecord } from "../../effects/effect-records.ts";
import { endLeftOpen, progressesAmong } from "../../effects/progress/left-open.ts";
import type { OpenProgresses } from "../../effects/progress/open-progresses.ts";
import type { JsonValue } from "../../state/state-store.ts";
import { reviveEvent } from "../../wire/events.ts";
import type { RegisterResponse } from "../../wire/responses.ts";
import type { BotContexts } from "../bot-contexts.ts";
import { effectsKeyOf, ledgerIdOf } from "../event-fields.ts";
import type { NoteOfLog } from "./dialog-log.ts";
import type { DialogRecord, EndNote, LogEntry } from "./dialog-record.ts";
import type { Dialogs } from "./dialogs.ts";
import { replayedEffects } from "./nested-effects.ts";

/**
 * How long ending them may hold the conversation (an edit failing again and again is retried,
 * paced, meanwhile), on the daemon's clock: the note's ending, and a run's stopped by the end.
 * Past it the note's are left to the next start, and a run's to the note (its header keeps them).
 */
export const PROGRESS_END_WAIT_MS = 60_000;

/**
 * What a note carries of the progresses: where their runs' records are, their steps the dialog's
 * log kept (`nested`: the entry a run is carried, see nested-effects.ts), and the server's limits then.
 */
interface LeftOpen {
  key: string;
  first: JsonValue[];
  /**
   * The highest effect number the records `first` came from hold: a run under way at the end (the
   * dialog's last, which asks nothing more) opens its progresses past it, in the bot's effect
   * records alone. Its ending reads them there: cut by a stop or a kill, no handler ends them.
   */
  from?: number;
  nested?: JsonValue;
  featureLevel: number;
  maxMessageLength: number;
  editLimitSeconds?: number;
}

/** `note` with the progresses `record`'s runs opened (if any), to end once the dialog ended. */
export function withProgresses(
  contexts: BotContexts,
  record: DialogRecord,
  note: EndNote | undefined,
): EndNote | undefined {
  const progress = note && leftOpenOf(contexts, record);
  return note === undefined || progress === undefined ? note : { ...note, progress };
}

/**
 * What a note carries of the progresses `record`'s runs opened, and of where a run under way then
 * records those it opens (see {@link LeftOpen}); undefined for a dialog with no message of its own.
 */
function leftOpenOf(contexts: BotContexts, record: DialogRecord): JsonValue | undefined {
  const first = progressesAmong(record.effects);
  const server = contexts.server;
  if (server === undefined || record.origin === null) return undefined;
  const id = ledgerIdOf(reviveEvent(record.origin).event);
  if (id === undefined) return undefined;
  const key = effectsKeyOf(id, record.rewinds);
  const { featureLevel, maxMessageLength, editLimitSeconds } = server;
  const carried = replayedEffects({ effects: [], nested: record.nested })[0];
  const numbers = record.effects.map((r) => (r as unknown as EffectRecord).n).filter(Number.isInteger);
  const left: LeftOpen = {
    key,
    first,
    from: Math.max(0, ...numbers),
    ...(carried && { nested: carried }),
    featureLevel,
    maxMessageLength,
    ...(editLimitSeconds === undefined ? {} : { editLimitSeconds }),
  };
  return left as unknown as JsonValue;
}

/** How many times the write keeping a stopped run's progresses with the note is tried (pauses of 0.25, 0.5 and 1 s). */
const KEEP_TRIES = 4;

/**
 * A run of `dialog` stopped because an operator ended the dialog meanwhile (its question refused
 * as ended, or not asked, or its retry not run), or because the code changed under it: its
 * `progresses` (halted) end as failed with its own text. Those it opened are in no log the end
 * read, so first, once the end settled, they are recorded in the note the ended header keeps
 * (`kept`: the run's effect records, its log's and its own): stopped before they end (a kill,
 * the stop's deadline), the note's ending at the next start ends them, each once (one ended
 * already is found ended in its records). So kept, ending them holds the conversation at most
 * {@link PROGRESS_END_WAIT_MS}: past it, those still open are left to the note's ending, said
 * next there. Kept nowhere (no note; the write failing
 * through its tries), they are ended here until they are, or until `signal` (the stop): their
 * edits tried again, paced by the account's budget.
 */
export async function endRunProgresses(
  o: { contexts: BotContexts; log: Logger; dialogs: Dialogs },
  dialog: DialogRecord | undefined,
  kept: readonly EffectRecord[] | undefined,
  progresses: OpenProgresses | undefined,
  signal: AbortSignal,
): Promise<void> {
  if (progresses === undefined) return;
  const opened = kept && progressesAmong(kept as unknown as JsonValue[]).length > 0;
  const progress =
    dialog && opened && leftOpenOf(o.contexts, { ...dialog, effects: kept as unknown as JsonValue[] });
  let noted = false;
  if (dialog && progress !== undefined) {
    const ending = o.dialogs.entry(dialog.id)?.ending;
    // Landed, the header keeps them with the note; given up (the stop), it has none to keep them.
    const settled = ending?.then(
      () => true,
      () => true,
    );
    if (settled === undefined || (await raceAbort(settled, signal).catch(() => false))) {
      const keep = () => o.dialogs.log.noteProgress(dialog.id, progress);
      noted = await o.dialogs.retrying(signal, keep, KEEP_TRIES).catch((err: unknown) => {
        o.log.warn(
          { err, dialog: dialog.id },
          "could not keep an ended dialog's open progresses with its note: the run ends them itself",
        );
        return false;
      });
    }
  }
  const ended = dialog !== undefined;
  if (!noted) return progresses.abandon(signal, o.log, ended);
  const limit = timeoutSignal(o.contexts.clock, PROGRESS_END_WAIT_MS);
  try {
    await progresses.abandon(AbortSignal.any([signal, limit.signal]), o.log, ended);
  } finally {
    limit.clear();
  }
}

/**
 * `note` with the progresses of the log the end goes after (`Dialogs.end`), as it stands then: a
 * run's question kept after `record` was read brings the progresses that run opened. `note`: the
 * note as last made, said once the end is kept.
 */
export function noteOfLog(
  contexts: BotContexts,
  record: DialogRecord,
  note: EndNote | undefined,
): NoteOfLog & { note: EndNote | undefined } {
  const logged = {
    record,
    note: withProgresses(contexts, record, note),
    remake(log: DialogRecord, end: LogEntry): LogEntry {
      if (end.t !== "end" || end.note === undefined) return end;
      const { progress, ...base } = end.note;
      const made = withProgresses(contexts, log, base) ?? base;
      [logged.record, logged.note] = [log, made];
      return { ...end, note: made };
    },
  };
  return logged;
}

/** The server's limits: as known now, else (at a start, before a registration) as the note kept them. */
function serverOf(contexts: BotContexts, left: LeftOpen): ServerInfo {
  if (contexts.server) return contexts.server;
  const reg = {
    zulip_version: "",
    zulip_feature_level: left.featureLevel,
    max_message_length: left.maxMessageLength,
    realm_message_content_edit_limit_seconds: left.editLimitSeconds ?? null,
  };
  return serverInfoFrom(reg as unknown as RegisterResponse);
}

/**
 * End the progresses `note` carries as failed (each unless it ended already). True when done (or
 * there were none); false, logged, when one could not be ended: the note stays, and the next
 * start ends them.
 */
export async function endProgresses(
  o: { contexts: BotContexts; log: Logger },
  dialog: string,
  note: EndNote,
  stop?: AbortSignal,
): Promise<boolean> {
  const left = note.progress as unknown as LeftOpen | undefined;
  const records = o.contexts.effects;
  if (left === undefined || records === undefined) return true;
  const { contexts, log } = o;
  const limit = timeoutSignal(contexts.clock, PROGRESS_END_WAIT_MS);
  // Their calls wait for the budget in `stop`'s lane (a start's notes: the background lane).
  const signal = stop
    ? callLaneOf(AbortSignal.any([stop, limit.signal]), laneOf(undefined, stop))
    : limit.signal;
  const deps = {
    api: contexts.client,
    clock: contexts.clock,
    run: records.run(left.key, true, left.nested ? [left.nested as unknown as EffectRecord] : []),
    log,
    server: serverOf(contexts, left),
    signal,
    selfId: note.self,
  };
  try {
    // Past `from`: those a run under way at the end opened (its last run, cut by a stop or a kill).
    const later = left.from === undefined ? [] : await records.after(left.key, left.from);
    for (const first of [...left.first, ...progressesAmong(later as unknown as JsonValue[])])
      await endLeftOpen(deps, first);
    return true;
  } catch (err) {
    log.warn(
      { err, dialog },
      "could not end a progress of an ended dialog as failed: the next start ends it",
    );
    return false;
  } finally {
    limit.clear();
  }
}
