/**
 * A dialog as its runs see it: the fold of its log (dialog-log.ts). The log is an append-only
 * list of typed entries, one writer (the bot's Dialogs); a run replays the handler from the
 * start against this fold: each recorded question is checked against the code's, each recorded
 * effect and value is handed back instead of acting again, each recorded answer is returned. The
 * handler goes on for real only past the last recorded step.
 */
import type { JsonValue } from "../../state/state-store.ts";
import type { Where } from "../addressed.ts";
import { type AskedFields, type DialogHead, type EndNote, type EndReason, headOf } from "./dialog-head.ts";
import { mergeNested, type NestedEffects, nestedMark, rewoundNested } from "./nested-effects.ts";

export { asHead, type DialogHead, type EndNote, type EndReason, headOf, newHead } from "./dialog-head.ts";

/** One entry of a dialog's log. */
export type LogEntry =
  /** The message that started the dialog (the event its handler first received). */
  | { t: "start"; origin: JsonValue; at: number }
  /** A `ctx.now()`, `ctx.random()` or `ctx.external(name)` result, in the order the handler read it. */
  | { t: "val"; v: JsonValue; x?: string }
  /** An effect the dialog's runs made (a send, a booking), as the effect records keep it. */
  | { t: "fx"; fx: JsonValue }
  /** Steps of the runs nested in the dialog's runs (a progress's edits), by run name (nested-effects.ts). */
  | { t: "nfx"; fx: JsonValue }
  /** A question asked (or asked again after refused answers) at step `step`. */
  | ({
      t: "ask";
      step: number;
      id: string;
      fp: string;
      text: string;
      /** The question's message id on the server (null when its send gave none). */
      msg: number | null;
      at: number;
      deadline: number;
      /** The number of effects the dialog had made before this question's send (a rewind's mark). */
      q?: number;
      /** Asked elsewhere than the dialog's own conversation (`where`): the answer is taken there. */
      in?: AskedIn;
    } & AskedFields)
  /** An answer to step `step`: the message's id, its text and (for a `from` question) who sent it. */
  | { t: "ans"; step: number; msg: number; text: string; ts: number; by?: number; name?: string }
  /**
   * The person said the back word at step `step`: the question before it is asked again and its
   * answer replaced. The fold rewinds to just before that question's send.
   */
  | { t: "back"; step: number; msg: number; text: string; ts: number }
  /** The deadline of step `step` passed before an answer. */
  | { t: "late"; step: number; at: number }
  /** Message `msg`, the question waiting at step `step` (or its buttons), was deleted before an answer. */
  | { t: "gone"; step: number; msg: number; at: number }
  /**
   * The conversation `was` (its key) moved to `to` (a topic renamed or resolved, or moved to
   * another channel): the waiting question's, or the dialog's own while its question waits
   * elsewhere. The dialog waits, and says what it says, there.
   */
  | { t: "move"; was: string; to: AskedIn; at: number }
  /**
   * The dialog as a dead letter of its failed run carried it, its log begun again from it when
   * the letter is replayed (see `DialogLog.reopen`): everything before it, in one entry.
   */
  | { t: "carried"; record: JsonValue; at: number }
  /** The dialog is over: every later append is refused. `note`: what the person is told of it. */
  | { t: "end"; by: EndReason; at: number; note?: EndNote };

/** A conversation a question was asked in: its key, its name for people, and how to send there. */
export type AskedIn = { key: string; label: string; to: Where };

/** An answer as a replay hands it back: enough for the handler, not the whole message. */
export interface DialogAnswer {
  id: number;
  text: string;
  /** Epoch seconds, as the server stamped the message. */
  timestamp: number;
  /** Who answered, for a question others may answer (`from`). */
  by?: { id: number; name?: string };
}

/** One `ctx.prompt()` of a dialog. */
export interface DialogStep {
  /** The step's identity: `options.id`, else its position (`#1`, `#2`, …). */
  id: string;
  /** The prompt's kind, options and schema, hashed: a replay that differs is stopped. */
  fp: string;
  /** The question's text, as the code asked it. */
  question: string;
  /** The question's message id: only later messages answer it. */
  asked: number | null;
  /** Epoch ms: when it was asked (or asked again after an answer its schema refused). */
  askedAt: number;
  /** Epoch ms on the daemon's clock: no answer by then ends the prompt with `PROMPT_TIMEOUT`. */
  deadline: number;
  /** The person's answers, oldest first (several when the schema refused the earlier ones). */
  answers: DialogAnswer[];
  /** The deadline passed before an answer the run could use. */
  timedOut?: true;
  /** The question's message was deleted before an answer the run could use. */
  deleted?: true;
  /** Asked elsewhere than the dialog's own conversation: what the prompt says goes there too. */
  in?: AskedIn;
  /** Where a rewind to this step cuts the record: its values and effects (nested too) before the question. */
  mark?: { values: number; effects: number; nested?: Record<string, number> };
  /** The cancel word only the dialog's person says, on a question others answer (see the `ask` entry). */
  cancel?: string;
}

/** A dialog folded from its log, as a run replays it. */
export interface DialogRecord extends DialogHead {
  /** The origin event as the handler first received it. */
  origin: JsonValue;
  steps: DialogStep[];
  /** `ctx.now()`, `ctx.random()` and `ctx.external()` values, in the order the handler read them. */
  values: JsonValue[];
  /** The names of external values (by index of `values`; null for now/random: a record is plain JSON). */
  names: (string | null)[];
  /** The effect records the dialog's runs made (sends, bookings), in order. */
  effects: JsonValue[];
  /** The records of the runs nested in them (a progress's steps after its first post), if any. */
  nested?: NestedEffects;
  /** Rewinds (`back`) so far: the effects made after one are numbered apart from the rewound ones. */
  rewinds: number;
  /**
   * The effect records rewinds cut, oldest first: what they made stays on the server, and a
   * read-back after a lost answer (a booking, a snippet) does not take it for the one in flight.
   */
  rewound?: JsonValue[];
  /**
   * Where the dialog's conversations were moved, oldest first: what its runs send there goes to
   * the new place (absent in a record a dead letter kept before moves were followed).
   */
  moves?: { from: string; to: Where }[];
  /** The log ends with a `back`: its run replays up to the send of the question it asks again. */
  reasks?: true;
}

/** Fold `entries` (the whole log, in order) over `head` into the record a run replays. */
export function foldLog(head: DialogHead, entries: readonly LogEntry[]): DialogRecord {
  const record: DialogRecord = {
    ...head,
    origin: null,
    steps: [],
    values: [],
    names: [],
    effects: [],
    rewinds: 0,
  };
  for (const e of entries) apply(record, e);
  return record;
}

/** One entry's change to `record`: the fold's step. */
function apply(record: DialogRecord, e: LogEntry): void {
  switch (e.t) {
    case "start":
      record.origin = e.origin;
      break;
    case "val":
      record.names[record.values.length] = e.x ?? null;
      record.values.push(e.v);
      break;
    case "fx":
      record.effects.push(e.fx);
      break;
    case "nfx":
      record.nested = mergeNested(record.nested, e.fx);
      break;
    case "ask": {
      delete record.reasks;
      const step = record.steps[e.step];
      const asked = { asked: e.msg, askedAt: e.at, deadline: e.deadline };
      if (step) Object.assign(step, asked);
      else {
        const made: DialogStep = { id: e.id, fp: e.fp, question: e.text, ...asked, answers: [] };
        if (e.q !== undefined)
          made.mark = {
            values: record.values.length,
            effects: e.q,
            ...(record.nested && { nested: nestedMark(record.nested) }),
          };
        if (e.in !== undefined) made.in = e.in;
        if (e.cancel !== undefined) made.cancel = e.cancel;
        record.steps[e.step] = made;
      }
      break;
    }
    case "back":
      rewind(record, e);
      break;
    case "ans": {
      const answer: DialogAnswer = { id: e.msg, text: e.text, timestamp: e.ts };
      if (e.by !== undefined) answer.by = e.name === undefined ? { id: e.by } : { id: e.by, name: e.name };
      record.steps[e.step]?.answers.push(answer);
      break;
    }
    case "late":
    case "gone": {
      const step = record.steps[e.step];
      if (step && e.t === "late") step.timedOut = true;
      else if (step) step.deleted = true;
      break;
    }
    case "move":
      record.moves = [...(record.moves ?? []), { from: e.was, to: e.to.to }];
      break;
    case "carried":
      Object.assign(record, e.record);
      break;
    case "end":
      record.ended = e.by;
      break;
  }
}

/**
 * A `back` at step `e.step`: the record as it was just before the previous question was sent, so
 * that the replay asks it again and goes on from its new answer; the effects it cuts are kept in
 * `rewound`. Without a mark (a question kept by an older version), the word is an ordinary answer.
 */
function rewind(record: DialogRecord, e: LogEntry & { t: "back" }): void {
  const mark = record.steps[e.step - 1]?.mark;
  if (mark === undefined) {
    record.steps[e.step]?.answers.push({ id: e.msg, text: e.text, timestamp: e.ts });
    return;
  }
  record.steps.length = e.step - 1;
  record.reasks = true;
  record.values.length = mark.values;
  record.names.length = Math.min(record.names.length, mark.values);
  const cut = record.effects.splice(mark.effects);
  if (cut.length > 0) record.rewound = [...(record.rewound ?? []), ...cut];
  const nested = rewoundNested(record.nested, mark.nested);
  if (nested === undefined) delete record.nested;
  else record.nested = nested;
  record.rewinds++;
}

/**
 * The header after `entries` were appended to the log whose header is `head`, its fields in the
 * order headers are kept: its text is what the next append expects the store to hold (a field a
 * question adds, such as `back`, would otherwise follow `last` and the expectation miss once).
 */
export function headAfter(head: DialogHead, entries: readonly LogEntry[], bytes: number): DialogHead {
  const next = headOf(head);
  next.n = (head.n ?? head.seq) + 1;
  next.seq += entries.length;
  next.bytes += bytes;
  for (const e of entries) {
    if (e.t === "ask") {
      Object.assign(next, { step: e.step, asked: e.msg, deadline: e.deadline, waiting: true });
      // The waiting question's own fields replace the last one's (absent ones go).
      for (const field of ASKED_FIELDS) {
        if (e[field] === undefined) delete next[field];
        else Object.assign(next, { [field]: e[field] });
      }
      moveTo(next, e.in);
    } else if (e.t === "ans" || e.t === "back") {
      next.answered = [...next.answered, e.msg];
      next.waiting = false;
    } else if (e.t === "late" || e.t === "gone") next.waiting = false;
    else if (e.t === "move" && next.conversation === e.was) {
      next.conversation = e.to.key;
      next.where = e.to.label;
    } else if (e.t === "move" && next.home?.[0] === e.was) next.home = [e.to.key, e.to.label];
    else if (e.t === "end") {
      next.ended = e.by;
      next.waiting = false;
      if (e.note !== undefined) next.note = e.note;
    }
  }
  return headOf(next);
}

/** `head` waits in the conversation `place` (a question's `where`), or, without one, in its own. */
function moveTo(head: DialogHead, place: AskedIn | undefined): void {
  if (place !== undefined) {
    head.home ??= [head.conversation, head.where];
    head.conversation = place.key;
    head.where = place.label;
  } else if (head.home !== undefined) {
    [head.conversation, head.where] = head.home;
    delete head.home;
  }
}

/** The fields of a header that are the waiting question's, as its `ask` entry has them. */
const ASKED_FIELDS = ["from", "react", "rc", "btn", "back", "cmd", "cancel", "choices", "lost"] as const;
