/**
 * What a progress has on the server: its messages, what each shows, and the counts. Each step a
 * progress makes (an edit, a post) is an effect whose recorded result is this state after it, so a
 * re-run of the handler that finds a step made adopts the state instead of making it again: it
 * goes on from the last edit made, and a message posted is never posted twice.
 */
import type { JsonValue } from "../../state/state-store.ts";
import { fingerprint, stored } from "./text-parts.ts";

/** One message of a progress. */
export interface ShownMessage {
  id: number;
  /** When it was posted (epoch ms, the bot's clock): the edit time limit counts from here. */
  postedAt: number;
  /** How many characters of the text it shows. */
  length: number;
  /** Fingerprint of its content as last set. */
  content: string;
  /** Rolled over, or past the edit time limit: no longer the message edits go to. */
  closed: boolean;
  /** Refused by the server for good (deleted, or out of the bot's reach): closed, and never edited again. */
  gone?: true;
  /**
   * What the server dropped of its part (text-parts.ts `edgesOf`): line breaks at its start, the
   * whitespace at its end (a cut at a space). Absent when none, or not known.
   */
  edges?: { lead: number; trail: string };
}

export interface ShownState {
  messages: ShownMessage[];
  edits: number;
  posts: number;
  /** The final text was posted as new messages (from this index of `messages` on). */
  finalFrom?: number;
  /**
   * That final text, when it takes several messages: kept in the first one's record only (read
   * from there on a replay), so that an ending without the run posts the parts not posted yet.
   */
  finalText?: string;
  /** Finished (done, failed, or ended as failed), its reactions made: nothing ends it again. */
  over?: true;
  /**
   * An earlier run began a post and was cut before its record (made maybe, its answer lost): the
   * next post looks for it among the bot's messages first. Kept in the records of the steps made
   * until then (edits), so that a run cut again before that post still looks.
   */
  doubt?: true;
}

/** The fifth field: 0 open, 1 closed, 2 gone; then the edges, when there are any. */
type Row =
  | [number, number, number, string, 0 | 1 | 2]
  | [number, number, number, string, 0 | 1 | 2, number, string];

/** The state as a record's result (compact: a row per message). */
export function toRecord(state: ShownState): JsonValue {
  const rows: Row[] = state.messages.map((m) => {
    const row: Row = [m.id, m.postedAt, m.length, m.content, m.gone ? 2 : m.closed ? 1 : 0];
    const { lead = 0, trail = "" } = m.edges ?? {};
    return lead > 0 || trail !== "" ? [...row, lead, trail] : row;
  });
  return {
    m: rows,
    e: state.edits,
    p: state.posts,
    ...(state.finalFrom === undefined ? {} : { f: state.finalFrom }),
    ...(state.finalText !== undefined && state.finalFrom === state.messages.length - 1
      ? { t: state.finalText }
      : {}),
    ...(state.over ? { x: 1 } : {}),
    ...(state.doubt ? { d: 1 } : {}),
  };
}

/** A record's result back as the state; undefined if it is not one (another kind of effect). */
export function fromRecord(value: JsonValue): ShownState | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { m, e, p, f, t, x, d } = value as Record<string, unknown>;
  if (!Array.isArray(m) || typeof e !== "number" || typeof p !== "number") return undefined;
  const messages = (m as Row[]).map(([id, postedAt, length, content, closed, lead, trail]) => ({
    id,
    postedAt,
    length,
    content,
    closed: closed !== 0,
    ...(closed === 2 ? { gone: true as const } : {}),
    ...(typeof lead === "number" && typeof trail === "string" ? { edges: { lead, trail } } : {}),
  }));
  const over = { ...(x === 1 ? { over: true as const } : {}), ...(d === 1 ? { doubt: true as const } : {}) };
  const final = {
    ...(typeof f === "number" ? { finalFrom: f } : {}),
    ...(typeof t === "string" ? { finalText: t } : {}),
  };
  return { messages, edits: e, posts: p, ...final, ...over };
}

/** A copy to change (the recorded one stays as it was). */
export function copyState(state: ShownState): ShownState {
  return { ...state, messages: state.messages.map((m) => ({ ...m })) };
}

/** `state` with message `index` refused for good: closed, and never edited again. */
export function withGone(state: ShownState, index: number): ShownState {
  const next = copyState(state);
  Object.assign(next.messages[index]!, { closed: true, gone: true });
  return next;
}

/** Characters of the text held by the closed messages. */
export function heldLength(state: ShownState): number {
  let n = 0;
  for (const m of state.messages) if (m.closed) n += m.length;
  return n;
}

/**
 * `state`, ended by an earlier run with its final text posted (the failure note of a run that
 * failed past `finalAfterMs`), reopened so that `pieces`, the final text of this run (a retried
 * dead letter's, ending otherwise), is posted anew below; undefined when those messages show it.
 */
export function reopenedFor(state: ShownState, pieces: readonly string[]): ShownState | undefined {
  if (!state.over || state.finalFrom === undefined) return undefined;
  const shown = state.messages.slice(state.finalFrom).map((m) => m.content);
  if (pieces.length === shown.length && pieces.every((p, i) => fingerprint(stored(p)) === shown[i]))
    return undefined;
  const { over: _over, finalFrom: _from, finalText: _text, ...open } = copyState(state);
  return open;
}

/**
 * Whether `state`'s final text, ended at `now`, is posted anew as late work (begun over
 * `finalAfterMs` before). Not when an earlier run ended it with its text edited in: a run again
 * (a dialog's replay, a retry) ends as that end was decided, whatever the clock says now.
 */
export function endsLate(state: ShownState, now: number, finalAfterMs: number): boolean {
  return !state.over && now - state.messages[0]!.postedAt > finalAfterMs;
}
