/** POST /messages: the send endpoint, and the function control.sendAs shares with it. */
import type { SandboxCore } from "../core.ts";
import { badRequest, missingArgument } from "../http/api-error.ts";
import type { Params } from "../http/params.ts";
import { endpoint, route } from "../http/router.ts";
import { normalizeContent } from "../state/addressee.ts";
import type { UserRecord } from "../state/data.ts";
import { resolveTarget, sendMessage } from "../state/send-message.ts";
import { streamByName } from "../state/streams.ts";
import { userById } from "../state/users.ts";

const TYPES = ["direct", "private", "stream", "channel"] as const;

/** Read POST /messages parameters, send, and return `{ id }`. */
export function sendFromParams(core: SandboxCore, user: UserRecord, params: Params, clientName: string) {
  const type = params.literal("type", TYPES);
  if (type === undefined) throw missingArgument("type");
  const to = params.str("to");
  const topic = params.str("topic", { aliases: ["subject"] });
  const content = params.requiredStr("content");
  const localId = params.str("local_id");
  const queueId = params.str("queue_id");
  const readBySender = params.bool("read_by_sender");
  const isStream = type === "stream" || type === "channel";
  if (to === undefined) throw badRequest(isStream ? "Missing channel" : "Message must have recipients");
  if (isStream && topic === undefined) throw badRequest("Missing topic");
  if (isStream) normalizeContent(content);
  let target: ReturnType<typeof resolveTarget>;
  try {
    target = resolveTarget(core, { type, to, topic, content });
  } catch (err) {
    notifyOwnerOfMissingStream(core, user, type, to);
    throw err;
  }
  const msg = sendMessage(core, user, target, content, {
    client: clientName,
    readBySender,
    local: localId !== undefined && queueId !== undefined ? { queueId, localId } : undefined,
  });
  return { id: msg.id };
}

/** A bot sending to a missing channel makes the Notification Bot tell its owner (NOTES §7). */
function notifyOwnerOfMissingStream(core: SandboxCore, user: UserRecord, type: string, to: string): void {
  if (!user.is_bot || user.bot_owner_id === null || (type !== "stream" && type !== "channel")) return;
  if (/^\s*[[\d"]/.test(to) || streamByName(core.data, to)) return;
  const owner = userById(core.data, user.bot_owner_id);
  const notificationBot = core.data.users.find((u) => u.system_bot);
  if (!owner?.is_active || !notificationBot) return;
  const text =
    `Your bot @_**${user.full_name}|${user.user_id}** tried to send a message to channel #**${to}**, ` +
    "but that channel does not exist. Click [here](#channels/new) to create it.";
  sendMessage(core, notificationBot, { type: "private", recipients: [owner], topic: "" }, text, {
    client: "Internal",
    trusted: true,
  });
}

export const messagesSendRoutes = [
  route("/messages", {
    POST: endpoint((ctx) => sendFromParams(ctx.core, ctx.user, ctx.params, ctx.clientName), {
      incomingWebhookBots: true,
    }),
  }),
];
