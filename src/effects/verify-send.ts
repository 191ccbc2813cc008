/**
 * Did a send happen? After an ambiguous failure the server may have stored the message, so the
 * bot's newest messages in the conversation are read back (raw Markdown): one with the same
 * content, newer than `newer.after` (a message id) and no older than `newer.since` (epoch
 * seconds), is the send.
 */
import type { Client } from "../api/create-client.ts";
import type { NarrowTerm, SendMessageParams } from "../api/resources/messages.ts";

/** How many of the bot's newest messages in the conversation are compared. */
const LOOK_BACK = 20;

export async function findSent(
  api: Client,
  selfId: number,
  params: SendMessageParams,
  newer: { after: number | undefined; since?: number | undefined },
  signal?: AbortSignal,
  /** Which content counts as the send's: by default the same as `params.content`. */
  matches: (content: string) => boolean = (content) => content === params.content,
): Promise<{ id: number; content: string } | undefined> {
  const where: NarrowTerm[] =
    params.type === "stream" || params.type === "channel"
      ? [
          { operator: "channel", operand: params.to },
          { operator: "topic", operand: params.topic ?? "" },
        ]
      : [{ operator: "dm", operand: dmOperand(params.to as readonly number[] | readonly string[]) }];
  const { messages } = await api.messages.get(
    {
      anchor: "newest",
      num_before: LOOK_BACK,
      num_after: 0,
      narrow: [...where, { operator: "sender", operand: selfId }],
      apply_markdown: false,
    },
    signal ? { signal } : {},
  );
  const { after, since } = newer;
  const sent = messages.find(
    (m) =>
      matches(m.content) &&
      (after === undefined || m.id > after) &&
      (since === undefined || m.timestamp >= since),
  );
  return sent ? { id: sent.id, content: sent.content } : undefined;
}

function dmOperand(to: readonly number[] | readonly string[]): string | readonly number[] {
  return to.every((x) => typeof x === "number") ? (to as readonly number[]) : to.join(",");
}
