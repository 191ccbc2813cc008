/**
 * Putting events into queues: which queues get an event, and how each queue's registration
 * options (markdown, empty topic, narrow, all_public_streams) shape it.
 */
import type { SandboxCore } from "../core.ts";
import type { MessageRecord } from "../state/data.ts";
import { messageToApi } from "../state/message-view.ts";
import { isPublic, streamById } from "../state/streams.ts";
import { apiEmail, userById } from "../state/users.ts";
import type { EventQueue } from "./event-queue.ts";
import { matchesNarrow } from "./register-params.ts";

export type EventBody = Record<string, unknown> & { type: string };
/** Shape an event for one queue; return null to skip that queue. */
export type PerQueue = (queue: EventQueue, event: EventBody) => EventBody | null;

/** Send an event to every queue of the given users that accepts its type. */
export function emitToUsers(
  core: SandboxCore,
  userIds: Iterable<number>,
  event: EventBody,
  perQueue?: PerQueue,
): void {
  const users = new Set(userIds);
  for (const queue of core.queues.all()) {
    if (!users.has(queue.options.userId) || !queue.accepts(event.type)) continue;
    const shaped = perQueue ? perQueue(queue, structuredClone(event)) : structuredClone(event);
    if (shaped) queue.push(shaped);
  }
  core.changed();
}

/** Send an event to the queues of every active user. */
export function emitToAll(core: SandboxCore, event: EventBody): void {
  emitToUsers(
    core,
    core.data.users.filter((u) => u.is_active).map((u) => u.user_id),
    event,
  );
}

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
