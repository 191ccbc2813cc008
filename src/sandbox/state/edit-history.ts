/**
 * GET /messages/{id}/history: rebuild the snapshots from the stored edits (newest first) the way
 * the server's fill_edit_history_entries does, then return them oldest first.
 */
import type { MessageRecord, SandboxData } from "./data.ts";
import { htmlDiff } from "./html-diff.ts";
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
