/**
 * `ctx.typing`: show the bot as typing while work runs (`during`), and see who else is typing
 * (`who`, `isTyping`) from the bot's one {@link TypingTracker}.
 *
 * `who` and `isTyping` only know what `typing` events told the bot, so the bot must receive
 * them: call `bot.track("typing")` in setup (or handle `typing` events). Channel typing reaches
 * the bot only in channels it is subscribed to with at most 100 subscribers (NOTES §4.3).
 */
import type { Logger } from "pino";
import type { TypingApi } from "../../api/resources/typing.ts";
import type { Clock } from "../../time/clock.ts";
import type { ChannelIds } from "./channel-ids.ts";
import { typingDuring } from "./typing-during.ts";
import { checkTypingTarget, type TypingTarget, trackerConversation, typingParams } from "./typing-target.ts";
import type { TypingTracker } from "./typing-tracker.ts";

export type { TypingTarget };

/**
 * `ctx.typing`: show that the bot is typing while work runs, and see who else is.
 *
 * @example
 * ```ts
 * const answer = await ctx.typing.during({ users: [ctx.event.message.sender_id] }, (signal) => lookUp(question, signal));
 * const typists = await ctx.typing.who({ channel: "support", topic: "printer" }); // [12, 15]
 * ```
 */
export interface TypingHelper {
  /**
   * Runs `fn` while the bot shows as typing in `target`: `start` at once, again every
   * `server_typing_started_wait_period_milliseconds`, `stop` when `fn` settles (or is aborted).
   * Typing failures are logged at debug level and never fail `fn`.
   */
  during<T>(target: TypingTarget, fn: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** User ids shown as typing in `target`, in the order they started (the bot excluded). */
  who(target: TypingTarget): Promise<number[]>;
  /** Whether `userId` is shown as typing in `target`, or anywhere when none is given. */
  isTyping(userId: number, target?: TypingTarget): Promise<boolean>;
}

export interface TypingHelperDeps {
  typing: TypingApi;
  channels: ChannelIds;
  /** The bot's tracker; undefined until the bot has registered. */
  tracker: () => TypingTracker | undefined;
  /** Whether the bot's queue receives `typing` events. */
  tracked: () => boolean;
  startedWaitMs: () => number;
  selfId: () => number;
  log: Logger;
  clock: Clock;
  /** Warn once (per bot) that `who` cannot see anything without typing events. */
  warnUntracked: () => void;
}

/** The helper for one context (its `signal` cancels `during`). */
export function createTypingHelper(deps: TypingHelperDeps, signal: AbortSignal): TypingHelper {
  const conversation = async (target: TypingTarget, where: string) => {
    checkTypingTarget(target, where);
    const streamId = "users" in target ? undefined : await deps.channels.resolve(target.channel, signal);
    return { streamId, tracker: trackerConversation(target, streamId, deps.selfId()) };
  };
  const tracker = () => {
    if (!deps.tracked()) deps.warnUntracked();
    return deps.tracker();
  };
  return {
    async during(target, fn) {
      const { streamId } = await conversation(target, "ctx.typing.during()");
      const params = typingParams(target, streamId);
      return typingDuring((op, s) => deps.typing.set({ ...params, op }, s ? { signal: s } : {}), fn, {
        startedWaitMs: deps.startedWaitMs(),
        clock: deps.clock,
        signal,
        onError: (err, op) => deps.log.debug({ err, op }, "typing notification failed"),
      });
    },
    async who(target) {
      const { tracker: c } = await conversation(target, "ctx.typing.who()");
      return tracker()?.typingIn(c) ?? [];
    },
    async isTyping(userId, target) {
      if (target === undefined) return tracker()?.isTyping(userId) ?? false;
      const { tracker: c } = await conversation(target, "ctx.typing.isTyping()");
      return tracker()?.isTyping(userId, c) ?? false;
    },
  };
}
