/**
 * `ctx.typing` of one context: `during` sends the bot's typing notices around a piece of work,
 * `who` and `isTyping` read the bot's typing tracker.
 */
import type { Logger } from "pino";
import { laneOf } from "../../api/budget-line.ts";
import type { Client } from "../../api/create-client.ts";
import type { TypingParams } from "../../api/resources/typing.ts";
import type { Clock } from "../../time/clock.ts";
import {
  type ChannelIds,
  checkTypingTarget,
  type TypingHelper,
  type TypingTarget,
  typingDuring,
} from "./typing-helper.ts";
import type { TypingConversation, TypingTracker } from "./typing-tracker.ts";

export interface ContextTypingDeps {
  /** The context's signal: it cancels `during`, and its lane is the notices' lane. */
  signal: AbortSignal;
  /** The server's `server_typing_started_wait_period`, in ms. */
  startedWaitMs: number;
  /** The bot's user id (a direct conversation's tracker includes it). */
  selfId: number;
  client: Client;
  channels: ChannelIds;
  log: Logger;
  clock: Clock;
  /** The bot's tracker (undefined until it has registered). */
  tracker: () => TypingTracker | undefined;
}

export function contextTyping(deps: ContextTypingDeps): TypingHelper {
  const { signal, startedWaitMs, selfId, client, channels, log, clock, tracker } = deps;
  // POST /typing parameters (without `op`), and the tracker's conversation (which includes the bot).
  const conversation = async (
    target: TypingTarget,
    where: string,
  ): Promise<{ params: Omit<TypingParams, "op">; tracker: TypingConversation }> => {
    checkTypingTarget(target, where);
    if ("users" in target) {
      const userIds = [...new Set([...target.users, selfId])];
      return { params: { type: "direct", to: [...target.users] }, tracker: { type: "direct", userIds } };
    }
    const channelId = await channels.resolve(target.channel, signal);
    const { topic } = target;
    return {
      params: { type: "channel", stream_id: channelId, topic },
      tracker: { type: "channel", channelId, topic },
    };
  };
  return {
    during: async (target, fn) => {
      const { params } = await conversation(target, "ctx.typing.during()");
      // The notices have signals of their own (or none): they wait in the run's lane, as its calls do.
      const lane = laneOf(undefined, signal);
      const set = (op: TypingParams["op"], s?: AbortSignal) =>
        client.typing.set({ ...params, op }, s ? { signal: s, lane } : { lane });
      return typingDuring(set, fn, {
        startedWaitMs,
        clock,
        signal,
        onError: (err, op) => log.debug({ err, op }, "typing notification failed"),
      });
    },
    who: async (target) => {
      const { tracker: c } = await conversation(target, "ctx.typing.who()");
      return tracker()?.typingIn(c) ?? [];
    },
    isTyping: async (userId, target) => {
      if (target === undefined) return tracker()?.isTyping(userId) ?? false;
      const { tracker: c } = await conversation(target, "ctx.typing.isTyping()");
      return tracker()?.isTyping(userId, c) ?? false;
    },
  };
}
