import { BothostError } from "./bothost-error.ts";

/**
 * Thrown by a handler (or by `bot.catch`) to say that running it again cannot succeed (the
 * message is malformed, a rule is wrong): the event skips the remaining retries and becomes a
 * dead letter at once, where an operator can read it and, once the cause is fixed, replay it with
 * `bothost failed retry`. With `deadLetter: false` the failure is fully handled: the event is
 * done with, kept nowhere (only logged).
 *
 * @example
 * ```ts
 * bot.command("remind", async (ctx) => {
 *   const when = parseWhen(ctx.args);
 *   if (!when) throw new NoRetry(`cannot read a time in "${ctx.args}"`);
 * });
 * bot.catch(async (err, ctx) => {
 *   if (!(err instanceof UserError)) return; // retried, then kept as a dead letter
 *   await ctx.reply(err.message);
 *   throw new NoRetry("answered the user", { cause: err, deadLetter: false });
 * });
 * ```
 */
export class NoRetry extends BothostError<"NO_RETRY"> {
  override readonly name = "NoRetry";
  /** False: the event is not kept as a dead letter either. */
  readonly deadLetter: boolean;

  constructor(message: string, options?: { cause?: unknown; deadLetter?: boolean }) {
    super("NO_RETRY", message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.deadLetter = options?.deadLetter ?? true;
  }
}
