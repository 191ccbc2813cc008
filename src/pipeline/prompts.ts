/**
 * `ctx.prompt()`: a handler asks the sender something and waits for their next message in the
 * same conversation. That message is taken at the accept stage, before it would queue behind the
 * very handler waiting for it (the conversation's queue runs one handler at a time): it resolves
 * the prompt instead of reaching the handlers. Pending prompts live in this process only; a
 * restart or a failover forgets them, and the handler that waited is gone with it.
 */
import { BothostError } from "../errors/bothost-error.ts";
import { type Clock, realClock } from "../time/clock.ts";
import type { AnyEvent, ServerEvent } from "../wire/events.ts";
import type { Message } from "../wire/records.ts";
import { type Sender, textOf } from "./addressed.ts";
import { conversationKey } from "./conversation-key.ts";

/** What a prompt resolves with: the sender's next message in the conversation. */
export interface PromptAnswer {
  /** The answer's content without the bot's mention, trimmed. */
  text: string;
  /** The answer as the server sent it. */
  message: Message;
}

/**
 * What `ctx.prompt()` rejects with: no answer in time (`PROMPT_TIMEOUT`), the bot stopped while
 * the prompt waited or before it asked (`PROMPT_STOPPED`: shutdown, or a reload restarting the
 * bot), or a prompt already waits for the same person in the same conversation
 * (`PROMPT_PENDING`). Left uncaught, a `PROMPT_TIMEOUT` or `PROMPT_STOPPED` ends the run there:
 * it is logged (info) and neither retried (that would ask the person again) nor kept as a dead
 * letter.
 *
 * @example
 * ```ts
 * try {
 *   const size = await ctx.prompt("Which size: small or large?");
 *   await ctx.reply(`One ${size.text} coffee coming up.`);
 * } catch (err) {
 *   if (!(err instanceof PromptError && err.code === "PROMPT_TIMEOUT")) throw err;
 *   await ctx.reply("No answer, so no coffee for now. Ask again any time.");
 * }
 * ```
 */
export class PromptError extends BothostError<"PROMPT_TIMEOUT" | "PROMPT_STOPPED" | "PROMPT_PENDING"> {
  override readonly name = "PromptError";
}

/**
 * A prompt that got no answer in time, or whose bot stopped while it waited: a normal end of a
 * conversation, not a failure. The run ends there, handled: running it again would only ask the
 * person again.
 */
export function promptUnanswered(err: unknown): err is PromptError {
  return err instanceof PromptError && (err.code === "PROMPT_TIMEOUT" || err.code === "PROMPT_STOPPED");
}

/** The log line of a run that an unanswered prompt ended. */
export const PROMPT_UNANSWERED = "the prompt got no answer in time: the handler ended there";
/** The log line of a run that ended because the bot stopped while its prompt waited. */
export const PROMPT_STOPPED =
  "the bot stopped while the prompt waited for an answer: the handler ended there";

/** The log line of a run that {@link promptUnanswered} ended. */
export function promptEndLine(err: PromptError): string {
  return err.code === "PROMPT_STOPPED" ? PROMPT_STOPPED : PROMPT_UNANSWERED;
}

interface Waiting {
  answer(message: Message): void;
  stop(why: string): void;
}

/** The default wait: within the default handler timeout (30 s), which also ends a prompt. */
export const PROMPT_TIMEOUT_MS = 25_000;

export class PendingPrompts {
  /** Made by the first prompt: most bots never ask. */
  #waiting: Map<string, Waiting> | undefined;
  readonly #clock: Clock;
  /** Why the bot stopped, from {@link stop} until {@link restart}: prompts then end at once. */
  #stopped: string | undefined;

  constructor(clock: Clock = realClock) {
    this.#clock = clock;
  }

  /** Prompts waiting for an answer. */
  get size(): number {
    return this.#waiting?.size ?? 0;
  }

  /**
   * The bot stops: every waiting prompt rejects now with `PROMPT_STOPPED`, and so does every
   * prompt asked until {@link restart} (a handler still running during the stop).
   */
  stop(why = "the bot is stopping"): void {
    this.#stopped = why;
    const waiting = this.#waiting;
    if (waiting === undefined) return;
    for (const prompt of [...waiting.values()]) prompt.stop(why);
  }

  /** Take prompts again after {@link stop} (the bot was started again). */
  restart(): void {
    this.#stopped = undefined;
  }

  /** A `PROMPT_STOPPED` error when the bot is stopping, else undefined. */
  stopped(): PromptError | undefined {
    const why = this.#stopped;
    return why === undefined ? undefined : new PromptError("PROMPT_STOPPED", `${why}: the prompt ended.`);
  }

  /** Wait for `userId`'s next message in the conversation of `event`. */
  wait(event: ServerEvent, userId: number, timeoutMs: number, signal: AbortSignal): Promise<Message> {
    const stopped = this.stopped();
    if (stopped) return Promise.reject(stopped);
    const key = `${conversationKey(event)}|${userId}`;
    this.#waiting ??= new Map();
    const waiting = this.#waiting;
    if (waiting.has(key)) {
      return Promise.reject(
        new PromptError(
          "PROMPT_PENDING",
          "a prompt already waits for this person's answer in this conversation.",
        ),
      );
    }
    return new Promise<Message>((resolve, reject) => {
      const done = () => {
        waiting.delete(key);
        this.#clock.clearTimeout(timer);
        signal.removeEventListener("abort", aborted);
      };
      const timer = this.#clock.setTimeout(() => {
        done();
        reject(new PromptError("PROMPT_TIMEOUT", `no answer within ${timeoutMs} ms.`));
      }, timeoutMs);
      const aborted = () => {
        done();
        // The handler's signal: its handler_timeout ran out, or the bot is shutting down.
        const why = (signal.reason as Error | undefined)?.message ?? "the handler's signal was aborted";
        reject(
          new PromptError("PROMPT_TIMEOUT", `no answer before the handler had to end: ${why}`, {
            cause: signal.reason,
          }),
        );
      };
      if (signal.aborted) return aborted();
      signal.addEventListener("abort", aborted, { once: true });
      waiting.set(key, {
        answer: (message: Message) => {
          done();
          resolve(message);
        },
        stop: (why: string) => {
          done();
          reject(new PromptError("PROMPT_STOPPED", `${why}: the prompt ended without an answer.`));
        },
      });
    });
  }

  /** A message a prompt waits for: hand it over and return true (it then reaches no handler). */
  take(event: ServerEvent): boolean {
    const waiting = this.#waiting;
    if (waiting === undefined || waiting.size === 0 || event.type !== "message") return false;
    const message = (event as { message: Message }).message;
    const prompt = waiting.get(`${conversationKey(event)}|${message.sender_id}`);
    prompt?.answer(message);
    return prompt !== undefined;
  }
}

/** `ctx.prompt(text, options)` for a context: say `text`, then wait for the sender's answer. */
export async function prompt(
  prompts: PendingPrompts | undefined,
  ctx: {
    event: AnyEvent;
    bot: { userId: number; fullName?: string };
    signal: AbortSignal;
    sender: Sender | undefined;
    reply(text: string): Promise<unknown>;
  },
  text: string,
  options: { timeout?: number } = {},
): Promise<PromptAnswer> {
  const sender = ctx.sender;
  if (!sender || !prompts)
    throw new BothostError("HELPERS_UNAVAILABLE", "ctx.prompt() needs a message handled by a bot runtime.");
  // A stopping bot asks nothing: the question would go out with nobody left to take the answer.
  const stopped = prompts.stopped();
  if (stopped) throw stopped;
  await ctx.reply(text);
  // A sender means a message that passed its schema.
  const message = await prompts.wait(
    ctx.event as ServerEvent,
    sender.id,
    options.timeout ?? PROMPT_TIMEOUT_MS,
    ctx.signal,
  );
  const answer = { id: -1, type: "message", message, flags: [] } as unknown as ServerEvent;
  return { text: textOf(answer, ctx.bot), message };
}
