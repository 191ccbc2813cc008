/** What `ctx.prompt` reads of a message's context (see `PromptContext` in prompt.ts). */

import { ApiError } from "../../api/errors.ts";
import type { ChannelIds } from "../../effects/typing/typing-helper.ts";
import { BothostError } from "../../errors/bothost-error.ts";
import type { JsonValue } from "../../state/state-store.ts";
import type { SendTo } from "../addressed.ts";
import type { BotContext, SendEffects } from "../context-types.ts";
import { buttonCodes } from "./button-codes.ts";
import type { Dialogs } from "./dialogs.ts";
import { type PromptContext, type PromptOptions, prompt } from "./prompt.ts";
import type { Turn } from "./turn.ts";

function runtimeChannels(channels: ChannelIds | undefined): ChannelIds {
  if (channels === undefined)
    throw new BothostError("HELPERS_UNAVAILABLE", "ctx.prompt(): `where` needs a bot runtime's channels.");
  return channels;
}

/** `ctx.prompt` for the context `ctx` of a message's run (`turn`: the run as a dialog's turn). */
export function promptOf(
  ctx: BotContext<unknown> & { effects: SendEffects | undefined },
  dialogs: Dialogs | undefined,
  turn: Turn | undefined,
  channels: ChannelIds | undefined,
  now: () => number,
): (text: string, options?: PromptOptions<unknown>) => Promise<unknown> {
  // A question's send record is written as its log is: tried again while the store fails, until
  // the run's signal aborts (its handler_timeout, or the stop), so that an outage around the send
  // neither rejects the prompt nor sends the question twice.
  const label = (fp: string | undefined) => {
    const retry = dialogs && (<T>(write: () => Promise<T>) => dialogs.retrying(ctx.signal, write));
    if (fp !== undefined) ctx.effects?.run.label(fp, retry);
  };
  const view: PromptContext = {
    event: ctx.event,
    bot: ctx.bot,
    get sender() {
      return ctx.sender;
    },
    get where() {
      return ctx.where;
    },
    reply: (text, fp) => {
      label(fp);
      return ctx.reply(text) as Promise<{ id: number } | undefined>;
    },
    sendTo: (to: SendTo, fp?: string) => {
      label(fp);
      return ctx.send(to) as Promise<{ id: number } | undefined>;
    },
    channelId: (name: string) => runtimeChannels(channels).resolve(name, ctx.signal),
    join: (id: number, name: string) => runtimeChannels(channels).join(id, name, ctx.signal),
    made: () => (ctx.effects?.run.made ?? []) as unknown as JsonValue[],
    nestedMade: () => ctx.effects?.run.nestedMade ?? new Map(),
    sentEarlier: () => ctx.effects?.run.madeEarlier(ctx.effects.run.current) ?? false,
    sentAt: () => ctx.effects?.run.made.at(-1)?.begun,
    stamp: () => ctx.effects?.run.stamp(),
    react: (messageId, emoji) =>
      ctx.react(emoji, { messageId }).catch((err: unknown) => {
        if (!(err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429))
          throw err;
        // Refused for good. An emoji name the server does not know (its reason names it): the
        // bot's code is wrong, say so. Any other refusal is the question's (deleted meanwhile:
        // "Invalid message(s)"), which its dialog learns from the deletion: no fault of the choices.
        const line = `the button :${emoji}: could not be put on the question (${err.msg})`;
        if (err.msg.includes(`'${emoji}'`))
          ctx.log.warn({ err, emoji, messageId }, `${line}: check the emoji name in the prompt's choices`);
        else ctx.log.info({ err, emoji, messageId }, line);
        throw err;
      }),
    buttonCodes: (names) => buttonCodes(ctx.api, ctx.server.emojiDataUrl, names, ctx.signal),
    get signal() {
      return ctx.signal;
    },
  };
  if (turn === undefined) return (text, options) => prompt(dialogs, turn, now, view, text, options);
  // Each prompt is known under way until it is over: a run that ends meanwhile did not await it.
  return async (text, options) => {
    const over = turn.opened(new Error("ctx.prompt() called here"));
    try {
      return await prompt(dialogs, turn, now, view, text, options);
    } finally {
      over();
    }
  };
}
