/**
 * Delivering a new message: which queues get it, and how each queue's registration options
 * (markdown, empty topic, narrow, all_public_streams) shape it.
 */
import type { SandboxCore } from "../core.ts";
import type { MessageRecord } from "../state/data.ts";
import { messageToApi } from "../state/message-view.ts";
import { isPublic, streamById } from "../state/streams.ts";
import { apiEmail, userById } from "../state/users.ts";
import type { EventBody } from "./emit.ts";
import { matchesNarrow } from "./register-params.ts";

/**
 * Deliver a new message: to every recipient's queues (the sender's included) with their flags,
 * and with `flags: []` to all_public_streams or narrowed queues of other users for public
 * channels. The narrow behaviour follows the server's code, not its spec (docs/reference/sandbox.md).
 */
export function deliverMessage(
  core: SandboxCore,
  msg: MessageRecord,
  local?: { queueId: string; localId: string },
): void {
  const data = core.data;
  const stream = msg.stream_id === null ? undefined : streamById(data, msg.stream_id);
  const sender = userById(data, msg.sender_id)!;
  for (const queue of core.queues.all()) {
    if (!queue.accepts("message")) continue;
    const viewer = userById(data, queue.options.userId);
    if (!viewer?.is_active) continue;
    let flags = msg.flags[String(viewer.user_id)];
    if (flags === undefined) {
      const wantsPublic = queue.options.allPublicStreams || queue.options.narrow.length > 0;
      if (!wantsPublic || !stream || !isPublic(stream) || viewer.role === 600) continue;
      flags = [];
    }
    const narrowView = {
      type: msg.type,
      streamName: stream?.name ?? "",
      topic: msg.topic,
      senderEmail: apiEmail(data, sender),
    };
    if (!matchesNarrow(queue.options.narrow, narrowView, flags)) continue;
    const event: EventBody = {
      type: "message",
      message: messageToApi(data, msg, viewer, {
        applyMarkdown: queue.options.applyMarkdown,
        clientGravatar: queue.options.clientGravatar,
        allowEmptyTopicName: queue.options.capabilities.empty_topic_name,
      }),
      flags: [...flags],
    };
    if (local && local.queueId === queue.id) event.local_message_id = local.localId;
    queue.push(event);
  }
  core.changed();
}
