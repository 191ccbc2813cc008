import type { SandboxData, ScheduledRecord } from "./data.ts";
import { visibleTopic } from "./message-view.ts";

/** A scheduled message as GET /scheduled_messages and its events carry it. */
export function scheduledToApi(
  data: SandboxData,
  sm: ScheduledRecord,
  allowEmptyTopic = true,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    scheduled_message_id: sm.scheduled_message_id,
    type: sm.type,
    to: sm.to,
    content: sm.content,
    rendered_content: sm.rendered_content,
    scheduled_delivery_timestamp: sm.scheduled_delivery_timestamp,
    failed: sm.failed,
  };
  if (sm.type === "stream") out.topic = visibleTopic(data, sm.topic, allowEmptyTopic);
  return out;
}

/** Undelivered scheduled messages of a user (failed ones included), by delivery time. */
export function pendingScheduled(data: SandboxData, userId: number): ScheduledRecord[] {
  return data.scheduled
    .filter((s) => s.sender_id === userId && !s.delivered)
    .sort(
      (a, b) =>
        a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp ||
        a.scheduled_message_id - b.scheduled_message_id,
    );
}
