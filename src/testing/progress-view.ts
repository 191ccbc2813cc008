/**
 * What a test sees of a `ctx.progress`: the messages the bot posted for it, the final text they
 * hold, and how many times they were edited (from the sandbox's stored edit history).
 */
import type { SandboxControl } from "../sandbox/types.ts";
import type { TestMessage } from "./test-message.ts";

/** A progress as the conversation shows it once the bot finished it. */
export interface ProgressView {
  /** The bot's messages after the asking one in its conversation, oldest first. */
  messages: TestMessage[];
  /**
   * The final text: the contents of those messages, joined by a line break, leaving out the ones
   * that only point at a result posted anew (`movedNote`).
   */
  text: string;
  /** Content edits made to those messages. */
  edits: number;
  /**
   * Set when the handler failed every attempt (the message kept as a dead letter): why, as
   * `handled()` rejects. The progress ended as failed: `text` ends with its `failedNote`.
   */
  failed?: string;
}

export function progressView(
  control: SandboxControl,
  messages: TestMessage[],
  movedNote = "(finished: see below)",
  failed?: string,
): ProgressView {
  const ids = new Set(messages.map((m) => m.id));
  let edits = 0;
  for (const record of control.messages()) {
    if (!ids.has(record.id as number)) continue;
    const history = (record.edit_history ?? []) as { prev_content?: string }[];
    edits += history.filter((e) => e.prev_content !== undefined).length;
  }
  const text = messages
    .filter((m) => m.content !== movedNote)
    .map((m) => m.content)
    .join("\n");
  return { messages, text, edits, ...(failed !== undefined && { failed }) };
}
