/**
 * A message's edit history (GET /messages/{id}/history), quoted for a report description:
 * the original and each content edit, oldest first, each cut short so the rule stays readable.
 */

/** The fields of an edit snapshot this needs (the server's `message_history` entries). */
export interface Snapshot {
  content: string;
  timestamp: number;
  prev_content?: string;
}

const QUOTE_LENGTH = 160;

function quote(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const points = [...flat];
  return `“${points.length > QUOTE_LENGTH ? `${points.slice(0, QUOTE_LENGTH - 1).join("")}…` : flat}”`;
}

function when(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/**
 * @example
 * ```ts
 * describeHistory([{ content: "hi", timestamp: 1700000000 }, { content: "hi http://spam.example", prev_content: "hi", timestamp: 1700000300 }]);
 * // 'Edit history: original (2023-11-14 22:13 UTC) “hi”; edited 2023-11-14 22:18 UTC to “hi http://spam.example”.'
 * ```
 */
export function describeHistory(snapshots: readonly Snapshot[]): string {
  const [original, ...edits] = snapshots;
  if (original === undefined) return "Edit history: not available.";
  const parts = [`original (${when(original.timestamp)}) ${quote(original.content)}`];
  for (const s of edits) {
    if (s.prev_content === undefined) continue; // a topic or channel move, not a content edit
    parts.push(`edited ${when(s.timestamp)} to ${quote(s.content)}`);
  }
  return `Edit history: ${parts.join("; ")}.`;
}
