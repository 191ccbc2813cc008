/**
 * Scheduled-message delivery on the sandbox clock (NOTES §9): due messages go out at whole-minute
 * checks; more than 10 minutes late means failure (failed:true, an update event and a
 * Notification Bot DM); success sends the message and a `remove` event to the owner.
 */
import type { SandboxCore } from "./core.ts";
import { ApiError } from "./http/api-error.ts";
import { emitToUsers } from "./queues/delivery.ts";
import type { ScheduledRecord } from "./state/data.ts";
import { scheduledToApi } from "./state/scheduled-view.ts";
import { sendMessage } from "./state/send-message.ts";
import { streamById } from "./state/streams.ts";
import { userById } from "./state/users.ts";

const LATE_CUTOFF_SECONDS = 10 * 60;
const LATE_MESSAGE = "Message could not be sent at the scheduled time.";

/** Deliver (or fail) every scheduled message due by the start of the current minute. */
export function deliverDueScheduled(core: SandboxCore): number {
  const now = core.nowSeconds();
  const minuteStart = now - (now % 60);
  const due = core.data.scheduled
    .filter((s) => !s.delivered && !s.failed && s.scheduled_delivery_timestamp <= minuteStart)
    .sort((a, b) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp);
  for (const sm of due) deliverOne(core, sm, now);
  return due.length;
}

function deliverOne(core: SandboxCore, sm: ScheduledRecord, now: number): void {
  const data = core.data;
  const sender = userById(data, sm.sender_id);
  if (!sender?.is_active) {
    fail(core, sm, "Account is deactivated", false);
    return;
  }
  if (now - sm.scheduled_delivery_timestamp > LATE_CUTOFF_SECONDS) {
    fail(core, sm, LATE_MESSAGE, true);
    return;
  }
  try {
    const target =
      sm.type === "stream"
        ? { type: "stream" as const, stream: streamById(data, sm.to as number)!, topic: sm.topic }
        : {
            type: "private" as const,
            recipients: (sm.to as number[]).map((id) => userById(data, id)!).filter(Boolean),
            topic: "",
          };
    if (target.type === "stream" && !target.stream) throw new ApiError(400, "BAD_REQUEST", "Invalid channel");
    const msg = sendMessage(core, sender, target, sm.content, {
      client: sm.client,
      readBySender: sm.read_by_sender ?? undefined,
    });
    sm.delivered = true;
    sm.delivered_message_id = msg.id;
    emitToUsers(core, [sm.sender_id], {
      type: "scheduled_messages",
      op: "remove",
      scheduled_message_id: sm.scheduled_message_id,
    });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    fail(core, sm, err.message, true);
  }
}

function fail(core: SandboxCore, sm: ScheduledRecord, reason: string, notify: boolean): void {
  sm.failed = true;
  sm.failure_message = reason;
  core.changed();
  if (!notify) return;
  const data = core.data;
  emitToUsers(
    core,
    [sm.sender_id],
    { type: "scheduled_messages", op: "update", scheduled_message: {} },
    (queue, ev) => ({
      ...ev,
      scheduled_message: scheduledToApi(data, sm, queue.options.capabilities.empty_topic_name),
    }),
  );
  const bot = data.users.find((u) => u.system_bot);
  const sender = userById(data, sm.sender_id);
  if (!bot || !sender) return;
  const when = new Date(sm.scheduled_delivery_timestamp * 1000).toISOString().replace(".000Z", "+00:00");
  const text =
    `The message you scheduled for <time:${when}> was not sent because of the following error:\n\n` +
    `> ${reason}\n\n[View scheduled messages](#scheduled)\n\n`;
  sendMessage(core, bot, { type: "private", recipients: [sender], topic: "" }, text, {
    client: "Internal",
    trusted: true,
  });
}
