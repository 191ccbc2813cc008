/**
 * `ctx.prompt()`: say a question in the message's conversation and wait for the sender's next
 * message there. Durable: the question's step is kept in the dialog's record and the run ends
 * (no handler waits); the answer, or the deadline, runs the handler again from the start against
 * the record (turn.ts), which hands the recorded answers back until the code asks past them.
 */
import { parseDuration } from "../../config/schema-fields.ts";
import { BothostError } from "../../errors/bothost-error.ts";
import type { JsonValue } from "../../state/state-store.ts";
import type { AnyEvent, ServerEvent } from "../../wire/events.ts";
import type { Message } from "../../wire/records.ts";
import { type Sender, textOf, type Where } from "../addressed.ts";
import { conversationKey } from "../conversation-key.ts";
import type { DialogRecord, DialogStep } from "./dialog-record.ts";
import type { Dialogs } from "./dialogs.ts";
import { PromptError } from "./prompt-error.ts";
import { DialogChanged, type Turn } from "./turn.ts";

/** What a prompt's schema must offer (a zod schema does). */
export interface AnswerSchema<T> {
  safeParse(
    value: unknown,
  ): { success: true; data: T } | { success: false; error: { issues: readonly { message: string }[] } };
}

/** The options of `ctx.prompt(text, options)`: how long to wait, how to parse the answer, the cancel word. */
export interface PromptOptions<T = string> {
  /**
   * How long to wait: ms, or a duration such as `"90s"`, `"10m"`, `"3d"`. Default `"1h"`; at least
   * 1 s, at most 30 days. Kept across restarts: a deadline that passed while the bot was down
   * ends the prompt at its next start.
   */
  timeout?: number | string;
  /** Parses the answer's text (e.g. `z.enum(["small", "large"])`, `z.coerce.number().int()`). */
  schema?: AnswerSchema<T>;
  /** Answers the schema may refuse, each asked again with the reason, before `PROMPT_INVALID`. Default 3. */
  tries?: number;
  /**
   * The word that ends the dialog (compared without case), and what the bot then says; `false`:
   * none. Default `"cancel"`, answered with {@link CANCELLED_REPLY}.
   */
  cancel?: string | false | { word: string; reply: string };
}

/** What a prompt resolves with: the sender's next message in the conversation, parsed. */
export interface PromptAnswer<T = string> {
  /** The answer's content without the bot's mention, trimmed. */
  text: string;
  /** The schema's result (with no schema, the text). */
  value: T;
  /** The answer as the server sent it. */
  message: Message;
}

const PROMPT_DEFAULT_TIMEOUT_MS = 3_600_000;
const PROMPT_MIN_TIMEOUT_MS = 1_000;
const PROMPT_MAX_TIMEOUT_MS = 30 * 86_400_000;
const DEFAULT_TRIES = 3;
const DEFAULT_CANCEL = "cancel";
export const CANCELLED_REPLY = "Cancelled. Start again any time.";

/** What a prompt reads of its context. */
export interface PromptContext {
  event: AnyEvent;
  bot: { userId: number; fullName?: string };
  sender: Sender | undefined;
  where: Where | undefined;
  reply(text: string): Promise<unknown>;
  /** The effects made so far by this run, for the record. */
  made(): readonly JsonValue[];
}

export async function prompt<T>(
  dialogs: Dialogs | undefined,
  turn: Turn | undefined,
  now: () => number,
  ctx: PromptContext,
  text: string,
  options: PromptOptions<T> = {},
): Promise<PromptAnswer<T>> {
  const sender = ctx.sender;
  if (!sender || !dialogs || !turn)
    throw new BothostError("HELPERS_UNAVAILABLE", "ctx.prompt() needs a message handled by a bot runtime.");
  const timeoutMs = timeoutOf(options.timeout);
  const tries = options.tries ?? DEFAULT_TRIES;
  if (!Number.isSafeInteger(tries) || tries < 1)
    throw new BothostError("PROMPT_OPTIONS", `ctx.prompt(): tries must be a whole number ≥ 1, got ${tries}.`);
  const step = turn.nextStep();
  const recorded = turn.record?.steps[step];
  if (recorded === undefined) {
    const conversation = conversationKey(ctx.event as ServerEvent);
    const id = String((ctx.event as { message: Message }).message.id);
    if (dialogs.busy(conversation, sender.id, id)) {
      throw new PromptError(
        "PROMPT_PENDING",
        "another dialog already waits for this person's answer in this conversation.",
      );
    }
    const fresh = turn.record === undefined;
    const base = turn.record ?? newRecord(ctx, sender, id, conversation, now());
    // A new dialog is known before its question is sent: the person's answer, should it come
    // before the record is kept (a slow store, past the handler timeout), waits for it.
    if (fresh) dialogs.asking(base);
    try {
      await ctx.reply(text);
      const at = now();
      const steps = [...base.steps, { question: text, askedAt: at, deadline: at + timeoutMs, answers: [] }];
      return await park(dialogs, turn, ctx, { ...base, steps });
    } catch (err) {
      if (fresh) dialogs.notAsking(id);
      throw err;
    }
  }
  if (recorded.question !== text) {
    throw new DialogChanged(
      step + 1,
      `the dialog's question ${step + 1} changed since it was asked (an update of the bot): it was stopped.`,
    );
  }
  await ctx.reply(text);
  const cancel = cancelOf(options.cancel);
  let refused = 0;
  for (const message of recorded.answers) {
    const answer = textOf({ type: "message", message } as unknown as ServerEvent, ctx.bot);
    if (cancel && answer.toLowerCase() === cancel.word.toLowerCase()) {
      await ctx.reply(cancel.reply);
      throw new PromptError("PROMPT_CANCELLED", "the person cancelled the dialog.");
    }
    const parsed = parseAnswer(options.schema, answer);
    if (parsed.ok) return { text: answer, value: parsed.value as T, message };
    if (++refused >= tries) {
      await ctx.reply(`That makes ${tries} answers I could not use (${parsed.reason}), so I stop here.`);
      throw new PromptError("PROMPT_INVALID", `${tries} answers were refused: ${parsed.reason}`);
    }
    await ctx.reply(`I could not use that: ${parsed.reason}. ${text}`);
  }
  if (recorded.timedOut) throw new PromptError("PROMPT_TIMEOUT", `no answer within ${timeoutMs} ms.`);
  // Every answer so far was refused (and asked again): wait at this step anew.
  const at = now();
  const again: DialogStep = { ...recorded, askedAt: at, deadline: at + timeoutMs };
  return park(dialogs, turn, ctx, { ...turn.record!, steps: [...turn.record!.steps.slice(0, step), again] });
}

async function park<T>(dialogs: Dialogs, turn: Turn, ctx: PromptContext, record: DialogRecord): Promise<T> {
  record.values = turn.values;
  record.effects = [...ctx.made()];
  await dialogs.park(record);
  return turn.park();
}

function newRecord(
  ctx: PromptContext,
  sender: Sender,
  id: string,
  conversation: string,
  at: number,
): DialogRecord {
  const where = ctx.where;
  return {
    v: 1,
    id,
    userId: sender.id,
    userName: sender.name,
    conversation,
    where: where === undefined || "direct" in where ? "direct message" : `#${where.channel} > ${where.topic}`,
    origin: ctx.event as unknown as JsonValue,
    startedAt: at,
    steps: [],
    waiting: true,
    values: [],
    effects: [],
  };
}

function parseAnswer<T>(
  schema: AnswerSchema<T> | undefined,
  text: string,
): { ok: true; value: T | string } | { ok: false; reason: string } {
  if (schema === undefined) return { ok: true, value: text };
  const result = schema.safeParse(text);
  if (result.success) return { ok: true, value: result.data };
  const reason = result.error.issues[0]?.message ?? "not an answer this question takes";
  return { ok: false, reason: reason.replace(/\.$/, "") };
}

function cancelOf(option: PromptOptions<unknown>["cancel"]): { word: string; reply: string } | undefined {
  if (option === false) return undefined;
  if (option === undefined || typeof option === "string")
    return { word: option ?? DEFAULT_CANCEL, reply: CANCELLED_REPLY };
  return option;
}

/** A prompt's `timeout` option in ms. */
export function timeoutOf(value: number | string | undefined): number {
  if (value === undefined) return PROMPT_DEFAULT_TIMEOUT_MS;
  const ms = parseDuration(value);
  if (ms === undefined || ms < PROMPT_MIN_TIMEOUT_MS || ms > PROMPT_MAX_TIMEOUT_MS) {
    throw new BothostError(
      "PROMPT_OPTIONS",
      `ctx.prompt(): timeout must be between 1s and 30d (ms, or a duration such as "10m" or "3d"), got ${JSON.stringify(value)}.`,
    );
  }
  return ms;
}
