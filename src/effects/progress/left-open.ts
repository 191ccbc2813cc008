/**
 * A progress left open by a dialog's run when the dialog ends without its handler running again
 * (an operator's end): what ending it takes is kept in its first post's record (the dialog's log
 * holds that record), so that it can be ended as failed from there, as its handler's final failure
 * would have ended it: its text (read back from the server, read-back.ts: the records keep only
 * fingerprints of it) with the failed note below. Its later steps are read from its effect
 * records, and the steps of its end are recorded there too: ended again after a restart, nothing
 * is made twice.
 */
import type { JsonValue } from "../../state/state-store.ts";
import type { EffectRun } from "../effect-records.ts";
import { Progress } from "./progress.ts";
import { readBack } from "./read-back.ts";
import { type ProgressDeps, type ProgressTarget, ServerSteps } from "./server-steps.ts";
import { fromRecord } from "./shown.ts";
import type { Settings } from "./types.ts";

/** What ends a progress as failed without its handler: its options, its asker's message, its conversation. */
interface ProgressEnds {
  working?: string;
  failed?: string;
  failedNote: string;
  endedNote?: string;
  movedNote: string;
  finalAfterMs: number;
  interval: number;
  asked?: number;
  to: ProgressTarget;
}

/** What the first post's record keeps of `settings` and `deps` (see {@link ProgressEnds}). */
export function endsOf(settings: Settings, deps: Pick<ProgressDeps, "askedId" | "target">): JsonValue {
  const { ack, failedNote, endedNote, movedNote, finalAfterMs, interval } = settings;
  const ends: ProgressEnds = {
    ...(ack.working === undefined ? {} : { working: ack.working }),
    ...(ack.failed === undefined ? {} : { failed: ack.failed }),
    failedNote,
    ...(endedNote === undefined ? {} : { endedNote }),
    movedNote,
    finalAfterMs,
    interval,
    ...(deps.askedId === undefined ? {} : { asked: deps.askedId }),
    to: deps.target,
  };
  return ends as unknown as JsonValue;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The first posts' results among `effects` (a run's effect records, as a dialog's log keeps them)
 * of the progresses that can be ended without their handler (recorded by a version that keeps
 * what that takes).
 */
export function progressesAmong(effects: readonly JsonValue[]): JsonValue[] {
  const found: JsonValue[] = [];
  for (const r of effects)
    if (
      isObject(r) &&
      r.kind === "progress" &&
      r.pending !== true &&
      isObject(r.result) &&
      isObject(r.result.s)
    )
      found.push(r.result as JsonValue);
  return found;
}

/**
 * End the progress whose first post's result is `first` as failed (its text read back, its failed
 * note below, the `failed` reaction in place of `working`), unless it ended already; `deps.run`: the effect records of the
 * run that opened it, its calls cut by `deps.signal`. Rejects when its end could not be made.
 */
export async function endLeftOpen(
  deps: Omit<ProgressDeps, "askedId" | "target" | "after" | "run"> & { run: EffectRun },
  first: JsonValue,
): Promise<void> {
  const opened = fromRecord(first);
  const ends = (first as { s?: unknown }).s as ProgressEnds | undefined;
  if (opened === undefined || ends === undefined) return;
  const full: ProgressDeps = { ...deps, askedId: ends.asked, after: ends.asked, target: ends.to };
  const own = new ServerSteps({ ...full, run: deps.run.nested(`progress-${opened.messages[0]!.id}`) });
  const recorded = await own.replayed(opened);
  if (recorded.over) return;
  // Left open by a dialog ended without its handler: its `endedNote` (when given) ends it.
  const note = ends.endedNote ?? ends.failedNote;
  const options = { failedNote: note, intervalMs: ends.interval, ...deps };
  // A final text cut partway through its posting is known whole from its records: the rest goes on.
  const final = recorded.finalText;
  const { state, text } =
    final === undefined ? await readBack(own, recorded, options) : { state: recorded, text: final };
  const settings: Settings = {
    finalAfterMs: ends.finalAfterMs,
    interval: ends.interval,
    ack: {
      ...(ends.working === undefined ? {} : { working: ends.working }),
      ...(ends.failed === undefined ? {} : { failed: ends.failed }),
    },
    movedNote: ends.movedNote,
    failedNote: note,
  };
  await new Progress(full, own, state, ends.failedNote, settings, text).abandon(deps.signal);
}
