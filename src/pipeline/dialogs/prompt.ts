/**
 * `ctx.prompt()`: say a question in the message's conversation and wait for the sender's next
 * message there. Durable: the question's step is kept in the dialog's record and the run ends
 * (no handler waits); the answer, or the deadline, runs the handler again from the start against
 * the record (turn.ts), which hands the recorded answers back until the code asks past them.
 */
import type { EffectRecord } from "../../effects/effect-records.ts";
import { failpoint } from "../../effects/failpoints.ts";
import { BothostError } from "../../errors/bothost-error.ts";
import type { JsonValue } from "../../state/state-store.ts";
import type { AnyEvent, ServerEvent } from "../../wire/events.ts";
import type { Message } from "../../wire/records.ts";
import type { Sender, SendTo, Where } from "../addressed.ts";
import { conversationKey } from "../conversation-key.ts";
import { checkChoices, checkEscapeWords, choiceOf, choicesOf, waitFrom, withChoices } from "./ask-options.ts";
import { checkWhere, placeOf } from "./ask-where.ts";
import { DialogEnded, LogMoved } from "./dialog-log.ts";
import { ANYONE } from "./dialog-places.ts";
import { type AskedIn, type DialogHead, type LogEntry, newHead } from "./dialog-record.ts";
import { V1_STEP } from "./dialog-v1.ts";
import type { Dialogs } from "./dialogs.ts";
import { nestedAdded } from "./nested-effects.ts";
import {
  MAX_LOG_BYTES,
  MAX_STEPS,
  MAX_WAITING_PER_PERSON,
  optionMistake,
  PromptError,
} from "./prompt-error.ts";
import {
  cancelOf,
  cancels,
  checkCommandNames,
  checkOptionKeys,
  checkSchema,
  DEFAULT_TRIES,
  escapesOf,
  GAVE_UP_TEXT,
  type PromptAnswer,
  type PromptOptions,
  parseAnswer,
  REFUSED_TEXT,
  timeoutOf,
} from "./prompt-options.ts";
import { fingerprint, recordedAs } from "./step-identity.ts";
import { DialogChanged, keptLater, type Turn } from "./turn.ts";

export type { AnswerSchema, PromptAnswer, PromptOptions, PromptTexts } from "./prompt-options.ts";
export { CANCELLED_REPLY, timeoutOf } from "./prompt-options.ts";

/** What a prompt reads of its context. */
export interface PromptContext {
  event: AnyEvent;
  /** `dryRun`: every write is captured (a dry run, a backtest), so a send's id is made up. */
  bot: { userId: number; fullName?: string; dryRun?: boolean };
  sender: Sender | undefined;
  where: Where | undefined;
  /** Says `text` in the conversation, once; `fp`: what a replay matches the send by. */
  reply(text: string, fp?: string): Promise<{ id: number } | undefined>;
  /** Says `to.content` elsewhere (a question's `where`), once; `fp`: what a replay matches the send by. */
  sendTo(to: SendTo, fp?: string): Promise<{ id: number } | undefined>;
  /** A channel's id by name (the bot's cache). */
  channelId(name: string): Promise<number>;
  /** Subscribes the bot to an existing channel, once per start. */
  join(id: number, name: string): Promise<void>;
  /** Reacts to message `messageId` with emoji `name`. */
  react(messageId: number, name: string): Promise<void>;
  /** The emoji identity of each of `names` the server's emoji data gives (button-codes.ts); never fails. */
  buttonCodes(names: readonly string[]): Promise<Record<string, string> | undefined>;
  /** The effects made so far by this run, for the log. */
  made(): readonly JsonValue[];
  /** What the runs nested in this one made so far, by name, for the log (nested-effects.ts). */
  nestedMade(): ReadonlyMap<string, readonly EffectRecord[]>;
  /** Whether the last send was found made by an earlier run (a crash before its question's log). */
  sentEarlier(): boolean;
  /** When the last send was begun (by the clock), as its record says (a dialog's question's does). */
  sentAt(): number | undefined;
  /** The next send's record keeps when it was begun (a refusal, which asks the question again). */
  stamp(): void;
  /** The run's signal: a question's log is tried again while the store fails, until it aborts. */
  readonly signal: AbortSignal;
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
  if (!sender)
    throw new BothostError(
      "HELPERS_UNAVAILABLE",
      `ctx.prompt() asks the person whose message is handled, and a ${ctx.event.type} event has none: to ask someone, ctx.startDialog(userId, text).`,
    );
  if (!dialogs || !turn)
    throw new BothostError("HELPERS_UNAVAILABLE", "ctx.prompt() needs a message handled by a bot runtime.");
  // The server refuses an empty message: said here, the mistake is named as the prompt's.
  if (typeof text !== "string" || text.trim() === "")
    throw optionMistake(`the question must be a text that is not blank, got ${JSON.stringify(text)}.`);
  checkOptionKeys(options);
  const timeoutMs = timeoutOf(options.timeout);
  const tries = options.tries ?? DEFAULT_TRIES;
  if (!Number.isSafeInteger(tries) || tries < 1)
    throw optionMistake(`tries must be a whole number ≥ 1, got ${JSON.stringify(tries)}.`);
  const { list: choices, emoji } = choicesOf(options.choices as never);
  checkChoices(choices);
  checkSchema(options.schema);
  if (choices !== undefined && options.schema !== undefined)
    throw optionMistake("give `choices` or `schema`, not both.");
  const from = waitFrom(options.from, options.except);
  const escapes = escapesOf(options, turn.step);
  checkEscapeWords(choices, escapes.back, cancelOf(options.cancel)?.word);
  checkCommandNames(escapes.cmd, dialogs.commandNames());
  const where = options.where === undefined ? undefined : checkWhere(options.where);
  const question = text;
  text = withChoices(text, choices, emoji);
  const step = turn.nextStep();
  let id = options.id ?? `#${step + 1}`;
  let fp = fingerprint(options, id, options.id === undefined ? text : undefined, from, where);
  /** What the log keeps of this step's question, its text `said` (asked in `place`, when elsewhere). */
  const asked = (said: string, place: AskedIn | undefined): Asked => ({
    step,
    id,
    fp,
    text: said,
    ...(from && { from }),
    ...(emoji && { react: emoji }),
    ...escapes,
    ...(from && choices && { choices: [...choices] }),
    ...(place && { in: place }),
  });
  const record = turn.record;
  const recorded = record?.steps[step];
  if (recorded === undefined) {
    if (record?.ended !== undefined) throw new DialogEnded(record.id);
    const head = record ?? newDialog(dialogs, ctx, sender);
    if (step >= MAX_STEPS || head.bytes > MAX_LOG_BYTES) {
      throw new PromptError(
        "PROMPT_TOO_LONG",
        `the dialog reached ${MAX_STEPS} questions or ${MAX_LOG_BYTES} bytes of log.`,
      );
    }
    const fresh = record === undefined;
    const place = where && (await placeOf(where, ctx.bot.userId, ctx.channelId));
    if (where && "direct" in where && from === undefined && !where.direct.includes(head.userId))
      throw optionMistake(
        `\`where\` is a direct message without the person asked (user ${head.userId}): add them, or say who answers with \`from\`.`,
      );
    const askIn = place?.key ?? head.home?.[0] ?? head.conversation;
    // Asked outside the run's own conversation, the run is out of that one's order: a dialog
    // there whose run or end is under way (its last reply said, its end not yet kept) is waited
    // for, and refuses only if it goes on waiting. In its own, what was under way came first.
    const elsewhere = askIn !== head.conversation;
    const waits = (who: number) =>
      elsewhere ? dialogs.busyAfter(askIn, who, head.id, ctx.signal) : dialogs.busy(askIn, who, head.id);
    if (from !== undefined && (await waits(ANYONE)))
      throw new PromptError("PROMPT_PENDING", "another question there waits for an answer from others.");
    if (from === undefined && elsewhere && (await waits(head.userId)))
      throw new PromptError("PROMPT_PENDING", "another dialog already waits for this person's answer there.");
    // Typed answers in a channel reach the bot only where it is subscribed (the channel of the
    // message it is handling reached it already).
    const here = (ctx.event as { message?: { stream_id?: number } }).message?.stream_id;
    if (place !== undefined && "channel" in place.to && place.to.channelId !== here)
      await ctx.join(place.to.channelId, place.to.channel);
    // A new dialog is known before its question is sent: the person's answer, should it come
    // before the log is kept (a slow store, past the handler timeout), waits for it. The events
    // the question needs where it is asked (deletions, moves) are asked for before it is out.
    dialogs.asking(head, askIn, fresh);
    try {
      const start: LogEntry[] = fresh
        ? [{ t: "start", origin: ctx.event as unknown as JsonValue, at: now() }]
        : [];
      return await ask(dialogs, turn, ctx, head, start, asked(text, place), timeoutMs, now);
    } catch (err) {
      // Cut by the handler timeout, the run is attempted again out of the conversation's order:
      // its entry stays until the runs are over (runs.ts), and the person's answer waits for them.
      if (fresh && !ctx.signal.aborted) dialogs.notAsking(head.id);
      throw err;
    }
  }
  // Asked by an older version, a step is matched by its text; else by its identity, or as the
  // same step under another (step-identity.ts).
  const same =
    recorded.fp === V1_STEP
      ? recorded.question === text && { id, fp }
      : (recorded.id === id && recorded.fp === fp && { id, fp }) ||
        recordedAs(recorded, step, options, question, from, where);
  if (!same) {
    throw new DialogChanged(
      step + 1,
      `the dialog's question ${step + 1} (${recorded.id}) changed since it was asked (an update of the bot): it was stopped.`,
      options.texts?.changed,
    );
  }
  [id, fp] = [same.id, same.fp];
  // What the prompt says goes where its question was asked.
  const said = (words: string, fp?: string) =>
    recorded.in ? ctx.sendTo({ ...recorded.in.to, content: words }, fp) : ctx.reply(words, fp);
  await said(text, `ask:${id}`);
  const cancel = cancelOf(options.cancel);
  const say = (template: string, reason: string) =>
    template
      .replaceAll("{reason}", reason)
      .replaceAll("{question}", text)
      .replaceAll("{tries}", String(tries));
  let refused = 0;
  /** The last refusal: it asked the question again, and carries its buttons. */
  let again: { id: number } | undefined;
  for (const answer of recorded.answers) {
    if (cancel && cancels(recorded, record!.userId, answer, cancel.word)) {
      await said(cancel.reply);
      throw new PromptError("PROMPT_CANCELLED", "the person cancelled the dialog.");
    }
    const parsed = choices ? choiceOf(choices, answer.text) : await parseAnswer(options.schema, answer.text);
    if (parsed.ok)
      return {
        text: answer.text,
        value: parsed.value as T,
        message: { id: answer.id, timestamp: answer.timestamp },
        by: answer.by ?? { id: record!.userId, name: record!.userName },
      };
    if (++refused >= tries) {
      await said(say(options.texts?.gaveUp ?? GAVE_UP_TEXT, parsed.reason));
      throw new PromptError("PROMPT_INVALID", `${tries} answers were refused: ${parsed.reason}`);
    }
    // The refusal asks the question again: not once the dialog is ending (an operator's end).
    if (dialogs.isEnded(record!.id)) throw new DialogEnded(record!.id);
    ctx.stamp();
    again = await said(say(options.texts?.refused ?? REFUSED_TEXT, parsed.reason));
  }
  if (recorded.timedOut) throw new PromptError("PROMPT_TIMEOUT", `no answer within ${timeoutMs} ms.`);
  if (recorded.deleted) throw new PromptError("PROMPT_DELETED", "the question was deleted.");
  // Every answer so far was refused (and asked again): wait at this step anew.
  return ask(dialogs, turn, ctx, record!, [], asked(recorded.question, recorded.in), timeoutMs, now, again);
}

/** What a prompt the run did not await gives once the run is over: nothing, ever. */
const NOT_AWAITED: Promise<never> = new Promise<never>(() => {});

/** A question's `ask` entry but for what its send and its append make (its message, time and deadline). */
type Asked = Omit<Extract<LogEntry, { t: "ask" }>, "t" | "msg" | "at" | "deadline">;

/**
 * Send the question of step `asked` (unless `again` is given: the refusal that already asked it
 * again, which then carries its buttons), then append it to the log, with what the run read and
 * made since the log's end: the run ends there.
 */
async function ask<T>(
  dialogs: Dialogs,
  turn: Turn,
  ctx: PromptContext,
  head: DialogHead,
  start: LogEntry[],
  asked: Asked,
  timeoutMs: number,
  now: () => number,
  again: { id: number } | undefined | false = false,
): Promise<T> {
  const deadline = now() + timeoutMs;
  const send = again === false;
  // An end asked for meanwhile (an operator's, landed or still tried): no question goes out.
  if (dialogs.isEnded(head.id)) throw new DialogEnded(head.id);
  // The run ended without awaiting this prompt (runs.ts says so): nothing is asked or kept.
  if (turn.over) return NOT_AWAITED as Promise<T>;
  // Where a `back` to this question cuts the record: before its send.
  const q = send ? { q: ctx.made().length } : {};
  const fp = `ask:${asked.id}`;
  const to = asked.in?.to;
  const sent =
    again === false
      ? await (to ? ctx.sendTo({ ...to, content: asked.text }, fp) : ctx.reply(asked.text, fp))
      : again;
  if (send) failpoint("question-sent");
  // A captured send's id is made up, above every real one: the question follows the message that
  // asked, as a webhook's reply does, so that the messages after it (a backtest's history) answer it.
  const shown = sent !== undefined && sent.id > 0 && !ctx.bot.dryRun ? sent.id : undefined;
  // Sent before a crash, kept only now: deleted or moved meanwhile, unseen by any queue.
  const earlier = send && shown !== undefined && ctx.sentEarlier() ? shown : undefined;
  // Shown since then (the bot down meanwhile), or asked again by a refusal sent before a crash:
  // its deadline counts from that send, not from now.
  const resent = again !== false && again !== undefined && ctx.sentEarlier();
  const sentAt = earlier === undefined && !resent ? undefined : ctx.sentAt();
  const due = sentAt === undefined ? deadline : Math.min(deadline, sentAt + timeoutMs);
  // Reactions on it before its log is kept wait for the log, as typed answers do.
  const entry = dialogs.entry(head.id);
  const buttons = shown !== undefined && asked.react !== undefined && dialogs.buttons.pressable;
  if (buttons && entry)
    dialogs.buttons.sent(shown, entry, asked.in?.key ?? head.home?.[0] ?? head.conversation);
  // The choices' emoji on the question, as buttons (one already there is no failure; one the
  // server refuses is logged, and its choice is still answered by its text or number). Their
  // codes, read meanwhile, are kept: a press under another name of an emoji answers too.
  const names = buttons ? Object.keys(asked.react!) : [];
  const codes = names.length > 0 ? ctx.buttonCodes(names) : undefined;
  if (shown !== undefined) for (const name of names) await ctx.react(shown, name).catch(() => {});
  const rc = await codes;
  // Sent, then the run ended without awaiting it: not kept, the person's answer is an ordinary message.
  if (turn.over) return NOT_AWAITED as Promise<T>;
  const made = ctx.made();
  const effects: LogEntry[] = [];
  for (let i = turn.record?.effects.length ?? 0; i < made.length; i++)
    effects.push({ t: "fx", fx: made[i] as JsonValue });
  const nested = nestedAdded(ctx.nestedMade(), turn.record?.nested);
  if (nested !== undefined) effects.push({ t: "nfx", fx: nested as unknown as JsonValue });
  const origin = (ctx.event as { message?: { id: number } }).message?.id ?? null;
  // A question answered in a webhook's response has no id yet: it follows the message that asked.
  // Asked again by a refusal: later messages than the question answer it, the buttons are there.
  const msg = send ? (shown ?? head.asked ?? origin) : (head.asked ?? origin);
  const btn = !send && shown !== undefined && asked.react ? { btn: shown } : {};
  const kept = { ...q, ...btn, ...(rc && { rc }) };
  const question: LogEntry = { t: "ask", ...asked, msg, at: now(), deadline: due, ...kept };
  const entries = [...start, ...turn.newValues(), ...effects, question];
  // The run ends here; the append goes on with the conversation held (tried again while the
  // store fails, until the stop), and the run's message is handled once it landed.
  const written = dialogs
    .append(head, entries, start.length > 0, { signal: ctx.signal, earlier })
    .catch(async (err: unknown) => {
      // An earlier run of this turn kept the same question (its reply was lost, or the run was
      // kept as a dead letter and replayed): the dialog goes on from its log, answered or not.
      if (!(err instanceof LogMoved && (await keptAlready(dialogs, head.id, asked)))) throw err;
    });
  if (start.length > 0) written.catch((err) => keptLater(ctx.signal, err) || dialogs.notAsking(head.id));
  return turn.park(written);
}

/**
 * True when dialog `id`'s log, as the store holds it, has question `asked` at its step: kept by an
 * earlier run, whether it still waits there or was answered since.
 */
async function keptAlready(dialogs: Dialogs, id: string, asked: { step: number; id: string; fp: string }) {
  const record = await dialogs.record(id, true);
  const step = record?.steps[asked.step];
  return step?.id === asked.id && step.fp === asked.fp;
}

/** The header of the dialog a message's first prompt begins. */
function newDialog(dialogs: Dialogs, ctx: PromptContext, sender: Sender): DialogHead {
  const conversation = conversationKey(ctx.event as ServerEvent);
  const id = String((ctx.event as { message: Message }).message.id);
  if (dialogs.busy(conversation, sender.id, id)) {
    throw new PromptError(
      "PROMPT_PENDING",
      "another dialog already waits for this person's answer in this conversation.",
    );
  }
  if (dialogs.waitingFor(sender.id, id) >= MAX_WAITING_PER_PERSON) {
    throw new PromptError(
      "PROMPT_LIMIT",
      `${MAX_WAITING_PER_PERSON} dialogs of this bot already wait for this person.`,
    );
  }
  const where = ctx.where;
  return newHead({
    id,
    userId: sender.id,
    userName: sender.name,
    conversation,
    where: where === undefined || "direct" in where ? "direct message" : `#${where.channel} > ${where.topic}`,
    startedAt: (ctx.event as { message: Message }).message.timestamp * 1000,
  });
}
