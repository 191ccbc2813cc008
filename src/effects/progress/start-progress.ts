/**
 * `ctx.progress(text, options)`: the options checked, the first message posted (once per event,
 * however often the handler runs), and the handle that edits it (progress.ts).
 */
import { endsOf } from "./left-open.ts";
import type { OpenProgress } from "./open-progresses.ts";
import { MIN_EDIT_INTERVAL_MS } from "./pacing.ts";
import { Progress, progressError } from "./progress.ts";
import { type ProgressDeps, ServerSteps, withPosted } from "./server-steps.ts";
import type { ShownState } from "./shown.ts";
import { stored } from "./text-parts.ts";
import type { ProgressOptions } from "./types.ts";

/** Work longer than this ends with its result posted anew (people are notified of a send, not an edit). */
export const DEFAULT_FINAL_AFTER_MS = 30_000;
export const DEFAULT_MOVED_NOTE = "(finished: see below)";
export const DEFAULT_FAILED_NOTE = "(failed: the work stopped before it finished)";

/** Post `text` and return the handle that edits it (see `ProgressHandle`). */
export async function startProgress(
  deps: ProgressDeps,
  text: string,
  options: ProgressOptions = {},
): Promise<OpenProgress> {
  const finalAfterMs = options.finalAfterMs ?? DEFAULT_FINAL_AFTER_MS;
  if (!(finalAfterMs >= 0)) throw progressError(`finalAfterMs must be 0 or more, not ${finalAfterMs}.`);
  const interval = options.minEditIntervalMs ?? MIN_EDIT_INTERVAL_MS;
  if (!Number.isFinite(interval)) throw progressError(`minEditIntervalMs must be a number, not ${interval}.`);
  const first = stored(text);
  if (first === "") throw progressError("the first text is empty: the server refuses an empty message.");
  const settings = {
    finalAfterMs,
    interval: Math.max(MIN_EDIT_INTERVAL_MS, interval),
    ack: options.ack ?? {},
    movedNote: options.movedNote ?? DEFAULT_MOVED_NOTE,
    failedNote: options.failedNote ?? DEFAULT_FAILED_NOTE,
    ...(options.endedNote !== undefined && { endedNote: options.endedNote }),
  };
  const steps = new ServerSteps(deps);
  const empty: ShownState = { messages: [], edits: 0, posts: 0 };
  // The first post is the one effect of the handler's own run; the steps after it are numbered
  // in a run of their own, so their number never shifts the handler's later effects.
  const posted = async () => {
    await steps.ack(options.ack?.working);
    return withPosted(empty, await steps.post(first), first, 0, deps.clock.now());
  };
  // Found posted by an earlier run (its answer lost), as when found recorded: a re-run.
  let foundPosted = false;
  const found = async () => {
    const id = (await steps.find(first, undefined, deps.newer?.()))?.id;
    foundPosted = id !== undefined;
    return id === undefined ? undefined : withPosted(empty, id, first, 0, deps.clock.now());
  };
  // Its record keeps what ends it without its handler (a dialog ended by an operator: left-open.ts).
  const { state, made } = await steps.once(posted, found, endsOf(settings, deps));
  const messageId = state.messages[0]!.id;
  const own = new ServerSteps({ ...deps, run: deps.run?.nested(`progress-${messageId}`) });
  const rerun = !made || foundPosted;
  const shown = await own.lastMade(state, rerun);
  // A run again: `working` put again (the crash may have come before it), unless an earlier run ended it.
  if (rerun && !shown.over) await steps.ack(options.ack?.working);
  return new Progress(deps, own, shown, first, settings);
}
