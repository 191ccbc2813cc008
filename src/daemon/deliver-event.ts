/**
 * An event from another transport than the queue (an outgoing-webhook POST, a backtest's
 * history) handed to a bot's pipeline: the same dedup, ordering and handlers as the queue.
 */
import type { Dispatcher } from "../pipeline/dispatcher.ts";
import type { ReplyFn } from "../pipeline/incoming.ts";
import type { ServerEvent } from "../wire/events.ts";

export interface DeliverOptions {
  /** Replaces `ctx.reply` (an outgoing webhook's HTTP response). */
  reply?: ReplyFn | undefined;
  /** Resolve once nothing runs: a dialog's run after the answer this event is, too (a backtest). */
  idle?: boolean;
  /** Its sender repeats it should a crash cut its answer off (an outgoing webhook): see `Incoming`. */
  repeatable?: boolean;
  /** Awaited before its run sends a dialog's question (an outgoing webhook's keep): see `Incoming`. */
  beforeAsking?: (() => Promise<void>) | undefined;
}

/**
 * Hand `event` to `dispatcher` once `fresh` (the bot's caches read again when too old:
 * cache-snapshot.ts) is done. True once the handlers finished, or it is a dialog's recorded answer;
 * false for a duplicate or the bot's own message.
 */
export function deliverEvent(
  dispatcher: Dispatcher,
  event: ServerEvent,
  options: DeliverOptions,
  fresh: () => Promise<void> | undefined,
): Promise<boolean> {
  const first = fresh();
  if (first) return first.then(() => deliverEvent(dispatcher, event, options, fresh));
  return new Promise((resolve) => {
    const done = () => resolve(options.idle ? dispatcher.onBelow(1).then(() => true) : true);
    const { reply, repeatable, beforeAsking } = options;
    const incoming = {
      event,
      replayed: false,
      issue: undefined,
      reply,
      recorded: done,
      repeatable,
      beforeAsking,
    };
    if (!dispatcher.accept(incoming, done)) resolve(false);
  });
}
