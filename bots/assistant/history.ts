/**
 * The conversation so far, as the model reads it: the newest messages of the topic (or the direct
 * message) before the one asked, fetched from the server, at most `count` of them and `chars`
 * characters in all; the bot's own as the assistant's turns, everyone else's as the user's,
 * with the sender's name. The bot's own messages whose whole text is in `notAnswers` (a progress's
 * placeholder, or the note left where an answer was posted anew) are no turns: the model would
 * read them as things it said.
 */
import type { BotContext } from "bothost";
import type { ChatMessage } from "./endpoint.ts";

type Narrow = { operator: string; operand: string | number | readonly number[] }[];

export async function historyOf(
  ctx: BotContext,
  count: number,
  chars: number,
  notAnswers: ReadonlySet<string> = new Set(),
): Promise<ChatMessage[]> {
  const where = ctx.where;
  const asked = (ctx.event as { message?: { id: number } }).message?.id;
  if (count === 0 || where === undefined || asked === undefined) return [];
  const narrow: Narrow =
    "direct" in where
      ? [{ operator: "dm", operand: where.direct }]
      : [
          { operator: "channel", operand: where.channelId },
          { operator: "topic", operand: where.topic },
        ];
  const { messages } = await ctx.api.messages.get(
    { anchor: asked, num_before: count, num_after: 0, narrow, apply_markdown: false },
    { signal: ctx.signal },
  );
  const turns: ChatMessage[] = [];
  let left = chars;
  // Newest first, until the characters run out; then back in order.
  for (const m of messages.filter((m) => m.id !== asked).reverse()) {
    const mine = m.sender_id === ctx.bot.userId;
    if (mine && notAnswers.has(m.content.trim())) continue;
    const content = mine ? m.content : `${m.sender_full_name}: ${m.content}`;
    if (content.length > left) break;
    left -= content.length;
    turns.push({ role: mine ? "assistant" : "user", content });
  }
  return turns.reverse();
}
