/**
 * What a dialog keeps in the bot's store (`<bot>/dialogs/<origin message id>`): the message that
 * started it, each question asked with the answers given to it, and what its runs recorded (their
 * effects, the values of `ctx.now()` and `ctx.random()`). A run of the dialog replays the handler
 * from the start against this record: each recorded question is checked against the code's, each
 * recorded effect returns its result instead of acting again, each recorded answer is handed back.
 * The handler goes on for real only past the last recorded step.
 */
import type { JsonValue } from "../../state/state-store.ts";
import type { Message } from "../../wire/records.ts";

/** One `ctx.prompt()` of a dialog. */
export interface DialogStep {
  /** The question's text, as the code asked it (a replay that asks another text is stopped). */
  question: string;
  /** Epoch ms: when it was asked (or asked again after an answer its schema refused). */
  askedAt: number;
  /** Epoch ms on the daemon's clock: no answer by then ends the prompt with `PROMPT_TIMEOUT`. */
  deadline: number;
  /** The person's answers, oldest first (several when the schema refused the earlier ones). */
  answers: Message[];
  /** The deadline passed before an answer the run could use. */
  timedOut?: true;
}

export interface DialogRecord {
  v: 1;
  /** The origin message's id: one dialog per message. */
  id: string;
  /** Who is asked: the origin message's sender. */
  userId: number;
  userName: string;
  /** The conversation's key (`channel:<id>:<topic>` or `dm:<ids>`): where the answer is taken. */
  conversation: string;
  /** Where, for people: `#general > standup` or `direct message`. */
  where: string;
  /** The origin event as the handler first received it. */
  origin: JsonValue;
  /** Epoch ms: the first question. */
  startedAt: number;
  steps: DialogStep[];
  /** True while the last step waits for an answer; false once one is recorded and not yet replayed. */
  waiting: boolean;
  /** `ctx.now()` and `ctx.random()` values, in the order the handler read them. */
  values: JsonValue[];
  /** The effect records the dialog's runs made (sends, bookings), in order. */
  effects: JsonValue[];
}

/** The step a waiting record waits at. */
export function waitingStep(record: DialogRecord): DialogStep | undefined {
  return record.waiting ? record.steps.at(-1) : undefined;
}

/** A record read back from the store, or undefined when it is not one this version can run. */
export function asRecord(value: JsonValue | undefined): DialogRecord | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const r = value as unknown as DialogRecord;
  return r.v === 1 && typeof r.id === "string" && Array.isArray(r.steps) ? r : undefined;
}
