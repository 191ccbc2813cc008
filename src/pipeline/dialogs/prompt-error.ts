/**
 * How a `ctx.prompt()` fails: a mistake in its options, or an end without an answer the handler
 * can use (and the log lines of a run that such an end stopped).
 */
import { BothostError } from "../../errors/bothost-error.ts";

/** A mistake in `ctx.prompt()`'s options (`PROMPT_OPTIONS`): `what` is wrong, and how. */
export const optionMistake = (what: string, options?: { cause?: unknown }) =>
  new BothostError("PROMPT_OPTIONS", `ctx.prompt(): ${what}`, options);

/**
 * What `ctx.prompt()` rejects with:
 * - `PROMPT_TIMEOUT`: no answer before the prompt's deadline (kept across restarts);
 * - `PROMPT_DELETED`: the question's message was deleted while it waited (see docs/guide/conversations.md);
 * - `PROMPT_CANCELLED`: the person answered with the cancel word (the bot has already said so);
 * - `PROMPT_INVALID`: every try the prompt allows was an answer its schema refused (the bot has
 *   already said so);
 * - `PROMPT_PENDING`: another dialog already waits for the same person in the same conversation;
 * - `PROMPT_LIMIT`: the person already has {@link MAX_WAITING_PER_PERSON} dialogs of this bot waiting;
 * - `PROMPT_TOO_LONG`: the dialog reached {@link MAX_STEPS} questions or {@link MAX_LOG_BYTES} of log.
 *
 * Left uncaught, each ends the dialog as handled: one `info` line, no retry (that would ask the
 * person again), no dead letter, and the run's `ctx.state` writes are dropped.
 *
 * @example
 * ```ts
 * try {
 *   const size = await ctx.prompt("Which size: small or large?", { schema: z.enum(["small", "large"]) });
 *   await ctx.reply(`One ${size.value} coffee coming up.`);
 * } catch (err) {
 *   if (!(err instanceof PromptError && err.code === "PROMPT_TIMEOUT")) throw err;
 *   await ctx.reply("No answer, so no coffee for now. Ask again any time.");
 * }
 * ```
 */
export class PromptError extends BothostError<
  | "PROMPT_TIMEOUT"
  | "PROMPT_DELETED"
  | "PROMPT_CANCELLED"
  | "PROMPT_INVALID"
  | "PROMPT_PENDING"
  | "PROMPT_LIMIT"
  | "PROMPT_TOO_LONG"
> {
  override readonly name = "PromptError";
}

/** The most questions one dialog asks (a step asked again after a refused answer counts once). */
export const MAX_STEPS = 100;
/** The most a dialog's log holds, in bytes of JSON (answers are kept as text). */
export const MAX_LOG_BYTES = 256 * 1024;
/** The most dialogs of one bot waiting for one person at once: a new one past it is refused. */
export const MAX_WAITING_PER_PERSON = 20;

/** A prompt that ended without an answer: a normal end of a dialog, not a failure. */
export function promptUnanswered(err: unknown): err is PromptError {
  return err instanceof PromptError;
}

/** The log line of a run that an unanswered prompt ended. */
export const PROMPT_UNANSWERED = "the prompt got no answer in time: the dialog ended there";
/** The log line of a run whose waiting question was deleted. */
export const PROMPT_DELETED = "the prompt's question was deleted: the dialog ended there";
/** The log line of a run the person cancelled. */
export const PROMPT_CANCELLED = "the person cancelled the dialog: it ended there";
/** The log line of a run whose prompt got no usable answer in the tries it allows. */
export const PROMPT_INVALID =
  "the prompt got no usable answer in the tries it allows: the dialog ended there";

/** The log line of a run that a prompt asked while another dialog waited ended. */
export const PROMPT_PENDING =
  "another dialog waits for an answer there (this person's, or a question for others): the prompt was not asked";

/** The log line of a run whose prompt would have made one dialog too many for its person. */
export const PROMPT_LIMIT = "the person has too many dialogs of this bot waiting: the prompt was not asked";
/** The log line of a run whose dialog reached its size limits. */
export const PROMPT_TOO_LONG = "the dialog reached its size limit: the prompt was not asked";

/** The log line of a run that {@link promptUnanswered} ended. */
export function promptEndLine(err: PromptError): string {
  if (err.code === "PROMPT_DELETED") return PROMPT_DELETED;
  if (err.code === "PROMPT_CANCELLED") return PROMPT_CANCELLED;
  if (err.code === "PROMPT_INVALID") return PROMPT_INVALID;
  if (err.code === "PROMPT_PENDING") return PROMPT_PENDING;
  if (err.code === "PROMPT_LIMIT") return PROMPT_LIMIT;
  if (err.code === "PROMPT_TOO_LONG") return PROMPT_TOO_LONG;
  return PROMPT_UNANSWERED;
}
