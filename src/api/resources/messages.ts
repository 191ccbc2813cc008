/** Messages: send, fetch, edit, delete, edit history, report. */
import { z } from "zod";
import { EditSnapshot, Message } from "../../wire/records.ts";
import { path } from "../encode.ts";
import { adaptMessageType, requireFeature } from "../feature-level.ts";
import type { CallOptions, ResourceContext } from "./context.ts";

interface SendCommon {
  content: string;
  /** With `local_id`, lets the own `message` event be matched to this send (local echo). */
  queue_id?: string;
  local_id?: string;
  /** Pass it explicitly: the server's default depends on the User-Agent (NOTES §13). */
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
const History = z.looseObject({ message_history: z.array(EditSnapshot) });
const Loose = z.looseObject({});

export function messagesApi(ctx: ResourceContext) {
  return {
    /**
     * Send a message (POST /messages). Not retried after a network error that may have reached the
     * server (it could post twice); retried after a 429.
     *
     * @example
     * ```ts
     * const { id } = await client.messages.send({ type: "channel", to: 5, topic: "greetings", content: "hi" });
     * ```
     */
    async send(params: SendMessageParams, options: CallOptions = {}) {
      const type = adaptMessageType(params.type, ctx.state);
      return ctx.request("POST", "/messages", { ...params, type }, { ...options, schema: SendResult });
    },

    /**
     * Fetch messages around an anchor (GET /messages).
     *
     * @example
     * ```ts
     * const { messages } = await client.messages.get({ anchor: "newest", num_before: 20, num_after: 0 });
     * ```
     */
    async get(params: GetMessagesParams, options: CallOptions = {}) {
      return ctx.request("GET", "/messages", { ...params }, { ...options, schema: MessagesPage });
    },

    /**
     * Edit a message's content, topic or channel (PATCH /messages/{id}).
     *
     * @example
     * ```ts
     * await client.messages.update(42, { topic: "renamed", propagate_mode: "change_all" });
     * ```
     */
    async update(message_id: number, params: UpdateMessageParams, options: CallOptions = {}) {
      return ctx.request(
        "PATCH",
        path`/messages/${message_id}`,
        { ...params },
        { ...options, schema: Loose },
      );
    },

    /** Delete a message (DELETE /messages/{id}). */
    async delete(message_id: number, options: CallOptions = {}): Promise<void> {
      await ctx.request("DELETE", path`/messages/${message_id}`, {}, options);
    },

    /**
     * A message's edit history, oldest first (GET /messages/{id}/history).
     *
     * @example
     * ```ts
     * const { message_history } = await client.messages.history(42);
     * ```
     */
    async history(
      message_id: number,
      params: { allow_empty_topic_name?: boolean } = {},
      options: CallOptions = {},
    ) {
      return ctx.request(
        "GET",
        path`/messages/${message_id}/history`,
        { ...params },
        { ...options, schema: History },
      );
    },

    /**
     * Report a message to the moderators (POST /messages/{id}/report, feature level 382).
     *
     * @example
     * ```ts
     * await client.messages.report(42, { report_type: "spam" });
     * ```
     */
    async report(
      message_id: number,
      params: { report_type: ReportType; description?: string },
      options: CallOptions = {},
    ): Promise<void> {
      requireFeature(ctx.state, "messageReport", "Reporting a message (POST /messages/{message_id}/report)");
      await ctx.request("POST", path`/messages/${message_id}/report`, { ...params }, options);
    },
  };
}

export type MessagesApi = ReturnType<typeof messagesApi>;
