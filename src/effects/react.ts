/**
 * `ctx.react`. A reaction is a state, not an event: adding one already there, or removing one
 * that is not, counts as done. So a call whose answer was lost is simply made again, and a
 * handler that runs again reacts no second time.
 */
import type { Client } from "../api/create-client.ts";
import { isApiError } from "../api/errors.ts";
import { sleep } from "../api/sleep.ts";
import { BothostError } from "../errors/bothost-error.ts";
import { type Clock, realClock, timersOf } from "../time/clock.ts";
import { isAmbiguous } from "./local-echo.ts";

/** Where `ctx.react` reacts, and whether it takes the reaction off. */
export interface ReactOptions {
  /** The message to react to; default the event's message (in a message handler). */
  messageId?: number;
  /** Take the reaction off instead. */
  remove?: boolean;
}

/** Tries in all when the answer is lost, and the pause before each retry. */
const ATTEMPTS = 3;
const PAUSE_MS = 500;

export async function react(
  api: Client,
  emoji: string,
  options: ReactOptions & {
    eventMessageId: number | undefined;
    signal: AbortSignal;
    /** The bot's clock: the pause before a retry waits on it (a test's held clock included). */
    clock?: Pick<Clock, "now"> & Partial<Clock>;
  },
): Promise<void> {
  const messageId = options.messageId ?? options.eventMessageId;
  if (messageId === undefined) {
    throw new BothostError(
      "REACT_NO_MESSAGE",
      `ctx.react("${emoji}"): this context has no message event (or, in a dialog ctx.startDialog began, no message of the person); pass { messageId }.`,
    );
  }
  const done = options.remove ? "REACTION_DOES_NOT_EXIST" : "REACTION_ALREADY_EXISTS";
  for (let attempt = 1; ; attempt++) {
    try {
      const op = options.remove ? api.reactions.remove : api.reactions.add;
      return await op(messageId, { emoji_name: emoji }, { signal: options.signal });
    } catch (err) {
      if (isApiError(err) && err.code === done) return;
      if (attempt >= ATTEMPTS || !isAmbiguous(err)) throw err;
      await sleep(timersOf(options.clock ?? realClock), PAUSE_MS * attempt, options.signal);
    }
  }
}
