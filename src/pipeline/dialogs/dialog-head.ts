/**
 * The header every dialog keeps beside its log (dialog-log.ts): what a start reads, never the
 * logs; and what an ended dialog's header keeps of its end.
 */
import type { JsonValue } from "../../state/state-store.ts";
import type { WaitFrom } from "./ask-options.ts";

/** Which commands run while a question waits, as its log keeps them (a prompt's `commands`). */
export type Escaping = boolean | string[];

/** Who or what ended a dialog. */
export type EndReason = "handler" | "failed" | "operator" | "changed" | "stopped";

/**
 * What the person is told of an end not theirs (an operator's note): its send, the end's time, the
 * bot; its progresses left open (end-progresses.ts); `sending`, marked before its send: it may have
 * gone out, so a start looks for it before saying it (end-notes.ts).
 */
export type EndNote = { to: JsonValue; at: number; self: number; progress?: JsonValue; sending?: true };

/**
 * What a question is, beyond its message and deadline: its `ask` entry's fields (dialog-record.ts),
 * which the header holds while it waits (each question's replace the last one's). A type, not an
 * interface: it is JSON.
 */
export type AskedFields = {
  /** Who may answer, when not the person the dialog is with. */
  from?: WaitFrom;
  /** Emoji name → choice: a reaction on the question answers with that choice. */
  react?: Record<string, string>;
  /**
   * Emoji name → the emoji's identity (`reaction_type:emoji_code`), for the buttons whose code is
   * known: a press under another name of the same emoji answers too (button-codes.ts).
   */
  rc?: Record<string, string>;
  /** The message its buttons are on, when not the question: the refusal that asked it again. */
  btn?: number;
  /** The word that asks the previous question again (absent at the first, or when off). */
  back?: string;
  /** The bot's commands that run while the question waits: all (true), none (false), those named; absent: `help`. */
  cmd?: Escaping;
  /**
   * On a question others answer (`from`), its cancel word: the dialog's person withdraws the
   * question with it, though they answer nothing else; from anyone else it is an ordinary
   * answer. Absent: no cancel word, or a question kept before the person could withdraw one
   * (the word then cancels from whoever may answer).
   */
  cancel?: string;
  /** On a question others answer with choices: only one of these (or its number) answers it. */
  choices?: string[];
  /** What the person is told should the store lose the dialog at this step (`texts.lost`). */
  lost?: string;
};

/** The header every dialog keeps beside its log: what a start reads (never the logs). */
export interface DialogHead extends AskedFields {
  /** 2; 1 in the headers the first versions with logs wrote for records of the version before (see {@link asHead}). */
  v: 2 | 1;
  /** The origin message's id, or `s…` for a dialog the bot started (`ctx.startDialog`). */
  id: string;
  /** Who is asked. */
  userId: number;
  userName: string;
  /** The conversation's key (`channel:<id>:<topic>` or `dm:<ids>`): where the answer is taken. */
  conversation: string;
  /** Where, for people: `#general > standup` or `direct message`. */
  where: string;
  /** Epoch ms: the first question. */
  startedAt: number;
  /** Entries in the log. */
  seq: number;
  /** Appends made (one stored key each; absent: one key per entry, as logs were first kept). */
  n?: number;
  /** Bytes of the log's entries as JSON. */
  bytes: number;
  /** The step the dialog is at (from 0). */
  step: number;
  /** The waiting question's message id. */
  asked: number | null;
  /** Epoch ms: the waiting step's deadline (0 before the first question). */
  deadline: number;
  /** True while the last step waits for an answer; false while an answer or deadline is to be run. */
  waiting: boolean;
  /** The ids of the answers recorded: a copy caught up again is no new answer. */
  answered: number[];
  /**
   * The dialog's own conversation and its name, while its waiting question is elsewhere
   * (`conversation` and `where` are then that question's).
   */
  home?: [string, string];
  /** Set once the dialog ended: later appends are refused. */
  ended?: EndReason;
  /** An ended dialog's note (its end entry's), until it is said (see end-notes.ts). */
  note?: EndNote;
  /** The last append, hashed: a retry of it after a lost reply finds it made. */
  last?: string;
}

/** A header read back from the store, or undefined when it is not one this version knows. */
export function asHead(value: JsonValue | undefined): DialogHead | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const h = value as unknown as DialogHead;
  // The first versions with logs wrote `v: 1` (the old record's) in the headers they made of the
  // older version's records: headers all the same, kept as they are, so that a write's expected
  // text still matches the store's.
  const known = h.v === 2 || (h.v === 1 && typeof h.seq === "number");
  return known && typeof h.id === "string" && Array.isArray(h.answered) ? h : undefined;
}

/** The fields of a header, in the order they are kept. */
const HEAD_FIELDS = [
  "v",
  "id",
  "userId",
  "userName",
  "conversation",
  "where",
  "startedAt",
  "seq",
  "n",
  "bytes",
  "step",
  "asked",
  "deadline",
  "waiting",
  "answered",
  "from",
  "react",
  "rc",
  "btn",
  "home",
  "back",
  "cmd",
  "cancel",
  "choices",
  "lost",
  "ended",
  "note",
  "last",
] as const satisfies readonly (keyof DialogHead)[];

/** The header fields of `dialog` (a record carries its whole log besides). */
export function headOf(dialog: DialogHead): DialogHead {
  const head: Record<string, unknown> = {};
  for (const field of HEAD_FIELDS) if (dialog[field] !== undefined) head[field] = dialog[field];
  return head as unknown as DialogHead;
}

/** `head` with its note marked `sending` (see {@link EndNote}), or not; as it is without a note. */
export function markedSending(head: DialogHead, sending: boolean): DialogHead {
  if (head.note === undefined) return head;
  const { sending: _, ...note } = head.note;
  return { ...head, note: sending ? { ...note, sending: true } : note };
}

/** A new dialog's header, before its first append. */
export function newHead(
  fields: Pick<DialogHead, "id" | "userId" | "userName" | "conversation" | "where" | "startedAt">,
): DialogHead {
  const { id, userId, userName, conversation, where, startedAt } = fields;
  return {
    v: 2,
    id,
    userId,
    userName,
    conversation,
    where,
    startedAt,
    seq: 0,
    n: 0,
    bytes: 0,
    step: 0,
    asked: null,
    deadline: 0,
    waiting: false,
    answered: [],
  };
}
