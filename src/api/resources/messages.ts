/** Messages: send, fetch, edit, delete, edit history, report; their reactions; scheduled messages. */
import { z } from "zod";
import { EditSnapshot, Message, ScheduledMessage } from "../../wire/records.ts";
import { path } from "../encode.ts";
import { adaptMessageType, requireFeature } from "../feature-level.ts";
import type { CallOptions, ResourceContext } from "../transport.ts";

interface SendCommon {
  content: string;
  /** With `local_id`, lets the own `message` event be matched to this send (local echo). */
  queue_id?: string;
  local_id?: string;
  /**
   * Pass it explicitly: the server's default depends on the User-Agent (see
   * docs/internals/server-behaviour.md#client-names).
   */
  read_by_sender?: boolean;
}

/** What `POST /messages` (and `ctx.send`) takes: a channel message with its topic, or a direct message. */
export type SendMessageParams =
  | (SendCommon & { type: "channel" | "stream"; to: number | string; topic?: string })
  | (SendCommon & { type: "direct" | "private"; to: readonly number[] | readonly string[] });

/** A narrow term: `[operator, operand]` or the object form. */
export type NarrowTerm =
  | readonly [string, string]
  | { operator: string; operand: string | number | readonly number[]; negated?: boolean };

export interface GetMessagesParams {
  anchor?: "newest" | "oldest" | "first_unread" | number;
  num_before?: number;
  num_after?: number;
  narrow?: readonly NarrowTerm[];
  include_anchor?: boolean;
  apply_markdown?: boolean;
  client_gravatar?: boolean;
  allow_empty_topic_name?: boolean;
}

export interface UpdateMessageParams {
  content?: string;
  topic?: string;
  propagate_mode?: "change_one" | "change_later" | "change_all";
  send_notification_to_old_thread?: boolean;
  send_notification_to_new_thread?: boolean;
  stream_id?: number;
  /** SHA-256 of the content being replaced, to refuse an edit that raced another. */
  prev_content_sha256?: string;
}

export type ReportType = "spam" | "harassment" | "inappropriate" | "norms" | "other" | (string & {});

export interface ReactionParams {
  emoji_name: string;
  emoji_code?: string;
  reaction_type?: "unicode_emoji" | "realm_emoji" | "zulip_extra_emoji";
}

export interface CreateScheduledMessageParams {
  type: "channel" | "stream" | "direct" | "private";
  /** A channel id for channel messages; user ids for direct ones (ids only, not names or emails). */
  to: number | readonly number[];
  content: string;
  /** Required for channel messages. */
  topic?: string;
  /** UNIX seconds, UTC; must be in the future. */
  scheduled_delivery_timestamp: number;
  read_by_sender?: boolean;
}

const SendResult = z.looseObject({
  id: z.number().int(),
  automatic_new_visibility_policy: z.number().int().optional(),
});
const MessagesPage = z.looseObject({
  messages: z.array(Message),
  // For anchor "newest" on an empty narrow the server answers 10000000000000000, above 2^53.
  anchor: z.number(),
  found_anchor: z.boolean().optional(),
  found_newest: z.boolean(),
  found_oldest: z.boolean(),
  history_limited: z.boolean().optional(),
});
const MessagesByIds = z.looseObject({ messages: z.array(Message) });
/** GET /messages/{id}: `message` from feature level 120, `raw_content` (deprecated) on every server. */
const OneMessage = z.looseObject({
  raw_content: z.string().optional(),
  message: z.looseObject({ content: z.string() }).optional(),
});
const History = z.looseObject({ message_history: z.array(EditSnapshot) });
const Loose = z.looseObject({});
const ScheduledCreated = z.looseObject({ scheduled_message_id: z.number().int() });
const ScheduledListed = z.looseObject({ scheduled_messages: z.array(ScheduledMessage) });

export function messagesApi(ctx: ResourceContext) {
  return {
    /**
     * Send a message (POST /messages). Not retried after a network error that may have reached the
     * server (it could post twice); retried after a 429.
     */
    send: (params: SendMessageParams, options: CallOptions = {}) => {
      const type = adaptMessageType(params.type, ctx.state);
      return ctx.call("POST", "/messages", { ...params, type }, options, SendResult);
    },

    /** Fetch messages around an anchor (GET /messages). */
    get: (params: GetMessagesParams, options: CallOptions = {}) =>
      ctx.call("GET", "/messages", params, options, MessagesPage),

    /**
     * The messages with these ids that the bot may see, in id order (GET /messages with
     * `message_ids`: feature level 300 and later; at most 1,000 at a time), as a bot's queue gets
     * them: raw Markdown, and the empty topic as `""` (not the realm's name for it).
     */
    byIds: (ids: readonly number[], options: CallOptions = {}) =>
      ctx.call(
        "GET",
        "/messages",
        { message_ids: ids, apply_markdown: false, allow_empty_topic_name: true },
        options,
        MessagesByIds,
      ),

    /**
     * One message the bot may read (GET /messages/{id}), its content raw Markdown
     * (`apply_markdown=false`). A message deleted, or out of the bot's reach: 400 "Invalid message(s)".
     */
    byId: (message_id: number, options: CallOptions = {}) =>
      ctx.call(
        "GET",
        path`/messages/${message_id}`,
        { apply_markdown: false, allow_empty_topic_name: true },
        options,
        OneMessage,
      ),

    /** Edit a message's content, topic or channel (PATCH /messages/{id}). */
    update: (message_id: number, params: UpdateMessageParams, options: CallOptions = {}) =>
      ctx.call("PATCH", path`/messages/${message_id}`, params, options, Loose),

    /** Delete a message (DELETE /messages/{id}). */
    delete: (message_id: number, options: CallOptions = {}) =>
      ctx.call("DELETE", path`/messages/${message_id}`, {}, options),

    /** A message's edit history, oldest first (GET /messages/{id}/history). */
    history: (
      message_id: number,
      params: { allow_empty_topic_name?: boolean } = {},
      options: CallOptions = {},
    ) => ctx.call("GET", path`/messages/${message_id}/history`, params, options, History),

    /** Report a message to the moderators (POST /messages/{id}/report, feature level 382). */
    async report(
      message_id: number,
      params: { report_type: ReportType; description?: string },
      options: CallOptions = {},
    ): Promise<void> {
      requireFeature(ctx.state, "messageReport", "Reporting a message (POST /messages/{message_id}/report)");
      return ctx.call("POST", path`/messages/${message_id}/report`, params, options);
    },
  };
}

export type MessagesApi = ReturnType<typeof messagesApi>;

export function reactionsApi(ctx: ResourceContext) {
  return {
    /** React to a message (POST /messages/{id}/reactions). */
    add: (message_id: number, params: ReactionParams, options: CallOptions = {}) =>
      ctx.call("POST", path`/messages/${message_id}/reactions`, params, options),

    /** Remove the account's reaction (DELETE /messages/{id}/reactions). */
    remove: (message_id: number, params: Partial<ReactionParams>, options: CallOptions = {}) =>
      ctx.call("DELETE", path`/messages/${message_id}/reactions`, params, options),
  };
}

/** Scheduled messages (feature level 179; editing has its own endpoint from 184). */
export function scheduledMessagesApi(ctx: ResourceContext) {
  const need = (what: string) => requireFeature(ctx.state, "scheduledMessages", what);
  return {
    /** Schedule a message (POST /scheduled_messages). */
    async create(params: CreateScheduledMessageParams, options: CallOptions = {}) {
      need("Scheduling a message (POST /scheduled_messages)");
      const wire = { ...params, type: adaptMessageType(params.type, ctx.state) };
      return ctx.call("POST", "/scheduled_messages", wire, options, ScheduledCreated);
    },

    /** The account's undelivered scheduled messages, failed ones included (GET /scheduled_messages). */
    async list(options: CallOptions = {}) {
      need("Listing scheduled messages (GET /scheduled_messages)");
      return ctx.call("GET", "/scheduled_messages", {}, options, ScheduledListed);
    },

    /**
     * Edit a scheduled message (PATCH /scheduled_messages/{id}). A failed one needs a new
     * `scheduled_delivery_timestamp`.
     */
    async update(
      scheduled_message_id: number,
      params: Partial<Omit<CreateScheduledMessageParams, "read_by_sender">>,
      options: CallOptions = {},
    ): Promise<void> {
      requireFeature(
        ctx.state,
        "scheduledMessagesEditEndpoint",
        "Editing a scheduled message (PATCH /scheduled_messages/{scheduled_message_id})",
      );
      const type = params.type === undefined ? undefined : adaptMessageType(params.type, ctx.state);
      return ctx.call(
        "PATCH",
        path`/scheduled_messages/${scheduled_message_id}`,
        { ...params, type },
        options,
      );
    },

    /** Cancel a scheduled message (DELETE /scheduled_messages/{id}). */
    async delete(scheduled_message_id: number, options: CallOptions = {}): Promise<void> {
      need("Deleting a scheduled message (DELETE /scheduled_messages/{scheduled_message_id})");
      return ctx.call("DELETE", path`/scheduled_messages/${scheduled_message_id}`, {}, options);
    },
  };
}
