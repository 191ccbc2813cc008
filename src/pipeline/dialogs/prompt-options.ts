/**
 * The options of `ctx.prompt(text, options)`, what it resolves with, and how each option is read
 * and checked (a mistake is `PROMPT_OPTIONS`, naming the option).
 */

import { parseDuration } from "../../config/duration.ts";
import { suggest } from "../../errors/did-you-mean.ts";
import { issueInWords } from "../../errors/issue-words.ts";
import type { AnswerFrom } from "./ask-options.ts";
import type { AskWhere } from "./ask-where.ts";
import type { Escaping } from "./dialog-head.ts";
import type { DialogAnswer, DialogStep } from "./dialog-record.ts";
import { optionMistake } from "./prompt-error.ts";

type ParseResult<T> =
  | { success: true; data: T }
  | { success: false; error: { issues: readonly { message: string }[] } };

/**
 * What a prompt's schema must offer (a zod schema does). `safeParseAsync`, when there, is used
 * instead of `safeParse`, so that a schema with an async refinement or transform works.
 */
export interface AnswerSchema<T> {
  safeParse(value: unknown): ParseResult<T>;
  safeParseAsync?(value: unknown): Promise<ParseResult<T>>;
}

/** The options of `ctx.prompt(text, options)`: how long to wait, how to parse the answer, the cancel word. */
export interface PromptOptions<T = string> {
  /**
   * The step's identity across changes of the bot's code. With an `id`, a reworded question goes
   * on (a dialog waiting at it is asked the new text); without one, a step is its position and
   * its text, and a dialog waiting at a changed question is stopped, its person told.
   */
  id?: string;
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
   * none. Default `"cancel"`, answered with {@link CANCELLED_REPLY}. On a question others answer
   * (`from`) it is the dialog's person's, to withdraw the question (they may say it though they
   * may not answer); said by one who answers, it is an ordinary answer.
   */
  cancel?: string | false | { word: string; reply: string };
  /**
   * The word (compared without case) that asks the previous question again, its new answer
   * replacing the old; `false`: none. Default `"back"`. At a dialog's first question it is an
   * ordinary answer, and on a question others answer (`from`) there is none. Effects the handler
   * made after the previous question are made again.
   */
  back?: string | false;
  /**
   * The bot's commands that run while the question waits, the question still waiting: `true`
   * every command, `false` none, or a list of names (`["help", "standup report"]`: a command's
   * name lets its subcommands through too). By default only `help` (when the bot has commands).
   */
  commands?: boolean | readonly string[];
  /** What the prompt says on its own (see {@link PromptTexts}). */
  texts?: PromptTexts;
  /**
   * Who may answer, when not the person the dialog is with: a user id, a list of ids, the
   * members of a group (`{ group: "release-managers" }`, kept fresh by `bot.track("groups")`), or
   * people with a role or a more privileged one (`{ role: "moderator" }`, `bot.track("users")`).
   * The answer is the first message after the question in this conversation from one of them
   * (with `choices`, the first that is a choice: the rest is their talk); others' messages there
   * are ordinary messages, but for the dialog's person's cancel word. One such question waits per
   * conversation.
   */
  from?: AnswerFrom;
  /**
   * The conversation to ask in, when not the dialog's own: a channel and topic
   * (`{ channel: "releases", topic: "approvals" }`, or a `ctx.where`) or a direct message with
   * given people (`{ direct: [userId] }`). The answer is taken there; what the prompt says on its
   * own (a refused answer, the cancel reply) is said there too.
   */
  where?: AskWhere;
  /** With `from`: never these user ids (e.g. the person who asked for the approval). */
  except?: readonly number[];
  /**
   * The answers the question takes, listed under it numbered: an answer is one of them (without
   * case) or its number, and `value` is the choice. As value → emoji name (`{ approve: "check" }`)
   * the bot also reacts to its question with each emoji, and a reaction there by a person who may
   * answer is the answer. Not with `schema`.
   */
  choices?: readonly T[] | Readonly<Record<T & string, string>>;
}

/**
 * What a prompt says on its own. `{reason}` is the schema's reason, `{question}` the question,
 * `{tries}` the tries allowed.
 */
export interface PromptTexts {
  /** An answer the schema refused, asked again. Default {@link REFUSED_TEXT}. */
  refused?: string;
  /** The last try refused, before `PROMPT_INVALID` reaches the handler. Default {@link GAVE_UP_TEXT}. */
  gaveUp?: string;
  /**
   * A dialog waiting at this step was begun by code that asked otherwise (another kind,
   * schema or, without an `id`, text): it is stopped and the person told this. Default
   * {@link CHANGED_NOTE}.
   */
  changed?: string;
  /**
   * The state store lost the dialog while it waited at this step (a Redis restarted without
   * persistence): the person is told this where it waits. Default {@link LOST_NOTE}.
   */
  lost?: string;
}

/** What a prompt resolves with: the sender's next message in the conversation, parsed. */
export interface PromptAnswer<T = string> {
  /** The answer's content without the bot's mention, trimmed. */
  text: string;
  /** The schema's result (with no schema, the text). */
  value: T;
  /** The answer's message: its id and the server's timestamp (epoch seconds); for a press on a button, the message pressed and when the bot took it. */
  message: { id: number; timestamp: number };
  /** Who answered: the dialog's person, or one of `from`. */
  by: { id: number; name?: string };
}

const PROMPT_DEFAULT_TIMEOUT_MS = 3_600_000;
const PROMPT_MIN_TIMEOUT_MS = 1_000;
const PROMPT_MAX_TIMEOUT_MS = 30 * 86_400_000;
export const DEFAULT_TRIES = 3;
const DEFAULT_CANCEL = "cancel";
export const CANCELLED_REPLY = "Cancelled. Start again any time.";
export const REFUSED_TEXT = "I could not use that: {reason}. {question}";
export const GAVE_UP_TEXT = "That makes {tries} answers I could not use ({reason}).";

export async function parseAnswer<T>(
  schema: AnswerSchema<T> | undefined,
  text: string,
): Promise<{ ok: true; value: T | string } | { ok: false; reason: string }> {
  if (schema === undefined) return { ok: true, value: text };
  const result = schema.safeParseAsync ? await schema.safeParseAsync(text) : schema.safeParse(text);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  const reason = issueInWords(issue) ?? issue?.message ?? "not an answer this question takes";
  return { ok: false, reason: reason.replace(/\.$/, "") };
}

/**
 * Checks the `schema` option when the question is asked: a value that cannot parse an answer
 * (a string, a plain object) would otherwise fail only once the person answered, leaving them
 * with no reply.
 */
export function checkSchema(schema: unknown): void {
  if (schema === undefined) return;
  const parse = (schema as { safeParse?: unknown } | null)?.safeParse;
  if ((typeof schema !== "object" && typeof schema !== "function") || typeof parse !== "function")
    throw optionMistake(
      `\`schema\` must be a zod schema such as z.enum(["small", "large"]) or z.coerce.number(), got ${describe(schema)}.`,
    );
  const expected = notText(schema as AnswerSchema<unknown>);
  if (expected !== undefined) {
    const coerced = ["number", "bigint", "boolean", "date"].includes(expected)
      ? `z.coerce.${expected}()`
      : undefined;
    throw optionMistake(
      `\`schema\` expects ${expected === "object" || expected === "array" ? "an" : "a"} ${expected}, but an answer is text, so it would refuse every one${coerced ? `: use ${coerced}, which reads the text` : ""}.`,
    );
  }
}

/**
 * The type `schema` expects when it refuses text as such (zod's `invalid_type` at the root: a
 * `z.number()` where `z.coerce.number()` was meant). A schema with async checks is not probed.
 */
function notText(schema: AnswerSchema<unknown>): string | undefined {
  try {
    const result = schema.safeParse("");
    if (result.success) return undefined;
    const issue = result.error.issues[0] as
      | { code?: string; path?: unknown[]; expected?: unknown }
      | undefined;
    if (issue?.code !== "invalid_type" || issue.path?.length !== 0) return undefined;
    return typeof issue.expected === "string" && issue.expected !== "string" ? issue.expected : undefined;
  } catch {
    return undefined;
  }
}

const describe = (value: unknown): string =>
  typeof value === "string"
    ? JSON.stringify(value)
    : value === null
      ? "null"
      : `${typeof value === "object" ? "an" : "a"} ${typeof value} without safeParse`;

export function cancelOf(
  option: PromptOptions<unknown>["cancel"],
): { word: string; reply: string } | undefined {
  if (option === false) return undefined;
  if (option === undefined) return { word: DEFAULT_CANCEL, reply: CANCELLED_REPLY };
  if (isText(option)) return { word: option, reply: CANCELLED_REPLY };
  if (typeof option === "object" && option !== null && isText(option.word) && isText(option.reply))
    return { word: option.word, reply: option.reply };
  // A shape read only once the person answers would fail there, with no reply to them.
  throw optionMistake(
    `\`cancel\` must be a word, false, or { word, reply } (two texts), got ${JSON.stringify(option)}.`,
  );
}

const isText = (value: unknown): value is string => typeof value === "string" && value.trim() !== "";

/** The `commands` option, checked: names lower-cased, their words one space apart. */
function commandsOf(commands: PromptOptions<unknown>["commands"]): Escaping | undefined {
  if (commands === undefined || typeof commands === "boolean") return commands;
  const names = Array.isArray(commands) ? commands : [];
  if (names.length === 0 || names.some((n) => typeof n !== "string" || n.trim() === ""))
    throw optionMistake("`commands` must be true, false or a list of the bot's command names.");
  return names.map((n: string) => n.trim().toLowerCase().split(/\s+/).join(" "));
}

/**
 * Refuses a `commands` list naming what is no command of the bot (`known`, undefined when it has
 * none): a misspelt name would let nothing through, the person's command taken as the answer.
 */
export function checkCommandNames(cmd: Escaping | undefined, known: readonly string[] | undefined): void {
  if (!Array.isArray(cmd) || known === undefined) return;
  const unknown = cmd.find((name) => !known.includes(name));
  if (unknown === undefined) return;
  const hint = suggest(unknown, known);
  throw optionMistake(
    `\`commands\` names "${unknown}", which is no command of the bot.${hint ? ` Did you mean "${hint}"?` : ""} Its commands: ${known.join(", ")}.`,
  );
}

/** Whether the command named `word` (`"standup report"` for a subcommand) runs under `cmd` (absent: `help` only). */
export function escapes(cmd: Escaping | undefined, word: string): boolean {
  if (typeof cmd === "boolean") return cmd;
  return (cmd ?? ["help"]).some((c) => word === c || word.startsWith(`${c} `));
}

/**
 * The `back`, `commands`, (on a question others answer) `cancel` and `texts.lost` options as a
 * question's log entry keeps them (`step`: from 0).
 */
export function escapesOf(
  options: PromptOptions<unknown>,
  step: number,
): { back?: string; cmd?: Escaping; cancel?: string; lost?: string } {
  const { back = "back", commands } = options;
  const lost = options.texts?.lost;
  if (lost !== undefined && !isText(lost)) throw optionMistake("`texts.lost` must be a text.");
  const cancel = cancelOf(options.cancel);
  if (back !== false && !isText(back)) throw optionMistake("`back` must be a word or false.");
  const cmd = commandsOf(commands);
  return {
    // Only the dialog's own person goes back: never on a question others answer.
    ...(back !== false && step > 0 && options.from === undefined && { back: back.trim() }),
    ...(cmd !== undefined && { cmd }),
    // The dialog's person withdraws a question others answer with the cancel word (see `cancels`).
    ...(cancel !== undefined && options.from !== undefined && { cancel: cancel.word }),
    // Kept in the header, which the process holds in memory when the store loses the dialog.
    ...(lost !== undefined && { lost }),
  };
}

/**
 * Whether `answer` to `step` of the dialog with `userId` is the cancel word `word` (compared without
 * case), said by one who may cancel: on a question others answer, kept with its cancel word, only
 * the dialog's person; else whoever answered.
 */
export function cancels(step: DialogStep, userId: number, answer: DialogAnswer, word: string): boolean {
  if (answer.text.toLowerCase() !== word.toLowerCase()) return false;
  return step.cancel === undefined || (answer.by?.id ?? userId) === userId;
}

/** Every option and text, listed as records so that one added to the types must be added here. */
const OPTION_KEYS = Object.keys({
  id: 1,
  timeout: 1,
  schema: 1,
  tries: 1,
  cancel: 1,
  back: 1,
  commands: 1,
  texts: 1,
  from: 1,
  where: 1,
  except: 1,
  choices: 1,
} satisfies Record<keyof PromptOptions<unknown>, 1>);
const TEXT_KEYS = Object.keys({ refused: 1, gaveUp: 1, changed: 1, lost: 1 } satisfies Record<
  keyof PromptTexts,
  1
>);

/**
 * Checks that `options` is an object of known options, `texts` one of known texts, and `id` and
 * each text are texts: a misspelt option (`timout`) would otherwise be dropped, the question asked
 * with the default.
 */
export function checkOptionKeys(options: unknown): void {
  const unknownIn = (value: unknown, keys: readonly string[], what: string, noun: string): void => {
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw optionMistake(`${what} must be an object, got ${JSON.stringify(value)}.`);
    for (const key of Object.keys(value)) {
      if (keys.includes(key)) continue;
      const hint = suggest(key, keys);
      throw optionMistake(
        `unknown ${noun} "${key}".${hint ? ` Did you mean "${hint}"?` : ""} Valid: ${keys.join(", ")}.`,
      );
    }
  };
  unknownIn(options, OPTION_KEYS, "the options", "option");
  const { id, texts } = options as PromptOptions<unknown>;
  if (id !== undefined && !isText(id))
    throw optionMistake(`\`id\` must be a text, got ${JSON.stringify(id)}.`);
  if (texts === undefined) return;
  unknownIn(texts, TEXT_KEYS, "`texts`", "text");
  for (const [key, text] of Object.entries(texts)) {
    if (text !== undefined && !isText(text))
      throw optionMistake(`\`texts.${key}\` must be a text, got ${JSON.stringify(text)}.`);
    checkPlaceholders(key, text);
  }
}

const PLACEHOLDERS = ["reason", "question", "tries"];

/** A `{word}` in `texts.refused` or `texts.gaveUp` that nothing fills in, or one in the others. */
function checkPlaceholders(key: string, text: string | undefined): void {
  const filled = key === "refused" || key === "gaveUp";
  for (const [, word = ""] of (text ?? "").matchAll(/\{([A-Za-z_]\w*)\}/g)) {
    if (filled && PLACEHOLDERS.includes(word)) continue;
    if (!filled && !PLACEHOLDERS.includes(word)) continue;
    throw optionMistake(
      filled
        ? `\`texts.${key}\` has {${word}}, which nothing fills in: its placeholders are {reason}, {question} and {tries}.`
        : `\`texts.${key}\` has {${word}}, which is filled in only in texts.refused and texts.gaveUp.`,
    );
  }
}

/** A prompt's `timeout` option in ms. */
export function timeoutOf(value: number | string | undefined): number {
  if (value === undefined) return PROMPT_DEFAULT_TIMEOUT_MS;
  const ms = parseDuration(value);
  if (ms === undefined || ms < PROMPT_MIN_TIMEOUT_MS || ms > PROMPT_MAX_TIMEOUT_MS) {
    throw optionMistake(
      `timeout must be between 1s and 30d (ms, or a duration such as "10m" or "3d"), got ${JSON.stringify(value)}.`,
    );
  }
  return ms;
}
