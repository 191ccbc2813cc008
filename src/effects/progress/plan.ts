/**
 * What a progress does next to bring the server's messages up to its text: edit the open message,
 * close it (rolled over, or past the edit time limit), or post the rest anew; nothing when the
 * messages show the text.
 */
import type { ShownState } from "./shown.ts";
import { cutAt, fingerprint, stored } from "./text-parts.ts";

/** A message is no longer edited this long before the organization's edit time limit. */
export const EDIT_LIMIT_MARGIN_MS = 10_000;

/** One step the pump can make next. */
export type Step =
  | { kind: "edit"; index: number; part: string; closes: boolean }
  /** `shows`: the part the message shows (as stored), so that it holds all of it. */
  | { kind: "close"; index: number; shows?: string }
  | { kind: "post"; part: string };

/** What the plan reads of a progress. */
export interface PlanView {
  state: ShownState;
  /** The text from where the open message's part starts. */
  tail: string;
  maxMessageLength: number;
  /** done() or fail() was called: the text no longer changes. */
  finished: boolean;
  /** Whether message `index` may still be edited. */
  editable(index: number): boolean;
}

/** Whether message `index` of `state` may still be edited: before the edit time limit, less a margin. */
export function editableAt(
  state: ShownState,
  index: number,
  now: number,
  frozen: ReadonlySet<number>,
  editLimitSeconds: number | undefined,
): boolean {
  const m = state.messages[index]!;
  if (frozen.has(m.id) || m.gone) return false;
  return editLimitSeconds === undefined || now - m.postedAt < editLimitSeconds * 1000 - EDIT_LIMIT_MARGIN_MS;
}

/** The next step toward showing the text, or undefined when the messages show it. */
export function planStep(view: PlanView): Step | undefined {
  const { state, tail } = view;
  const messages = state.messages;
  const index = messages.length - 1;
  const open = messages[index]!;
  // Deleted: nothing more is shown until the end, whose text is posted anew.
  if (open.gone) return undefined;
  const max = view.maxMessageLength;
  const part = tail.length > max ? tail.slice(0, cutAt(tail, max)) : tail;
  if (open.closed) return stored(tail) === "" ? undefined : { kind: "post", part };
  // A re-run's text shorter than what an earlier run showed there: no going back, it catches up.
  // Compared as shown: without what the server drops at the ends (unknown for a part read back).
  const { lead = 0, trail = "" } = open.edges ?? {};
  if (!view.finished && part === tail && stored(part).length < open.length - lead - trail.length)
    return undefined;
  const changed = stored(part) !== "" && fingerprint(stored(part)) !== open.content;
  // Closed showing its part, it holds all of it: the whitespace the server dropped at its end too.
  const close: Step = { kind: "close", index, ...(changed || stored(part) === "" ? {} : { shows: part }) };
  if (!view.editable(index)) return changed || part !== tail ? close : undefined;
  if (changed) return { kind: "edit", index, part, closes: part !== tail };
  return part === tail ? undefined : close;
}
