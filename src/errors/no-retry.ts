import { BothostError } from "./bothost-error.ts";

/**
 * Thrown by a handler to say that running it again cannot succeed (the message is malformed, a
 * rule is wrong): the event skips the remaining retries and becomes a dead letter at once, where
 * an operator can read it and, once the cause is fixed, replay it with `bothost failed retry`.
 *
 * @example
 * ```ts
 * bot.command("remind", async (ctx) => {
 *   const when = parseWhen(ctx.args);
 *   if (!when) throw new NoRetry(`cannot read a time in "${ctx.args}"`);
 * });
 * ```
 */
export class NoRetry extends BothostError<"NO_RETRY"> {
  override readonly name = "NoRetry";

  constructor(message: string, options?: { cause?: unknown }) {
    super("NO_RETRY", message, options);
  }
}
