/**
 * GET /messages/{id}/history: rebuild the snapshots from the stored edits (newest first) the way
 * the server's fill_edit_history_entries does, then return them oldest first.
 */
import type { MessageRecord, SandboxData } from "./data.ts";
import { visibleTopic } from "./message-view.ts";

export function editSnapshots(
  data: SandboxData,
  msg: MessageRecord,
  allowEmptyTopic: boolean,
): Record<string, unknown>[] {
  const topic = (t: string) => visibleTopic(data, t, allowEmptyTopic);
  let content = msg.content;
  let rendered = msg.rendered_content;
  let currentTopic = msg.topic;
  const snapshots: Record<string, unknown>[] = [];
  for (const edit of msg.edit_history) {
    const snap: Record<string, unknown> = {
      timestamp: edit.timestamp,
      topic: topic(currentTopic),
      user_id: edit.user_id,
    };
    if (edit.prev_topic !== undefined) {
      currentTopic = edit.prev_topic;
      snap.prev_topic = topic(edit.prev_topic);
    }
    if (edit.prev_stream !== undefined) {
      snap.prev_stream = edit.prev_stream;
      snap.stream = edit.stream;
    }
    snap.content = content;
    snap.rendered_content = rendered;
    if (edit.prev_content !== undefined) {
      snap.prev_content = edit.prev_content;
      snap.prev_rendered_content = edit.prev_rendered_content;
      snap.content_html_diff = htmlDiff(edit.prev_rendered_content ?? "", rendered);
      content = edit.prev_content;
      rendered = edit.prev_rendered_content ?? "";
    }
    snapshots.push(snap);
  }
  snapshots.push({
    content,
    rendered_content: rendered,
    timestamp: msg.timestamp,
    topic: topic(currentTopic),
    user_id: msg.sender_id,
  });
  return snapshots.reverse();
}

const tokenize = (html: string) => html.match(/<[^>]*>|[^<\s]+|\s+/g) ?? [];
const MAX_TOKENS = 2000;

export function htmlDiff(oldHtml: string, newHtml: string): string {
  const a = tokenize(oldHtml);
  const b = tokenize(newHtml);
  if (a.length * b.length > MAX_TOKENS * MAX_TOKENS) {
    return `<div><span class="highlight_text_inserted">${newHtml}</span></div>`;
  }
  // lcs[i][j]: longest common subsequence of a[i..] and b[j..].
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: string[] = [];
  const isTag = (t: string) => t.startsWith("<");
  const mark = (cls: string, t: string) =>
    isTag(t) || t.trim() === "" ? t : `<span class="${cls}">${t}</span>`;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(b[j]!);
      i++;
      j++;
    } else if (j < b.length && (i >= a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      out.push(mark("highlight_text_inserted", b[j]!));
      j++;
    } else {
      const t = a[i]!;
      if (!isTag(t)) out.push(mark("highlight_text_deleted", t));
      i++;
    }
  }
  return `<div>${out.join("")}</div>`;
}
