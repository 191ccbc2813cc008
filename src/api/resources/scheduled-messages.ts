/** Scheduled messages (feature level 179; editing has its own endpoint from 184). */
import { z } from "zod";
import { ScheduledMessage } from "../../wire/records.ts";
import { path } from "../encode.ts";
import { adaptMessageType, requireFeature } from "../feature-level.ts";
import type { CallOptions, ResourceContext } from "./context.ts";

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

export type UpdateScheduledMessageParams = Partial<Omit<CreateScheduledMessageParams, "read_by_sender">>;

const Created = z.looseObject({ scheduled_message_id: z.number().int() });
const Listed = z.looseObject({ scheduled_messages: z.array(ScheduledMessage) });

export function scheduledMessagesApi(ctx: ResourceContext) {
  const need = (what: string) => requireFeature(ctx.state, "scheduledMessages", what);
  return {
    /**
     * Schedule a message (POST /scheduled_messages).
     *
     * @example
     * ```ts
     * const { scheduled_message_id } = await client.scheduledMessages.create({
     *   type: "channel", to: 5, topic: "standup", content: "Standup time!",
     *   scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 3600,
     * });
     * ```
     */
    async create(params: CreateScheduledMessageParams, options: CallOptions = {}) {
      need("Scheduling a message (POST /scheduled_messages)");
      const type = adaptMessageType(params.type, ctx.state);
      return ctx.request("POST", "/scheduled_messages", { ...params, type }, { ...options, schema: Created });
    },

    /** The account's undelivered scheduled messages, failed ones included (GET /scheduled_messages). */
    async list(options: CallOptions = {}) {
      need("Listing scheduled messages (GET /scheduled_messages)");
      return ctx.request("GET", "/scheduled_messages", {}, { ...options, schema: Listed });
    },

    /**
     * Edit a scheduled message (PATCH /scheduled_messages/{id}). A failed one needs a new
     * `scheduled_delivery_timestamp`.
     */
    async update(
      scheduled_message_id: number,
      params: UpdateScheduledMessageParams,
      options: CallOptions = {},
    ) {
      requireFeature(
        ctx.state,
        "scheduledMessagesEditEndpoint",
        "Editing a scheduled message (PATCH /scheduled_messages/{scheduled_message_id})",
      );
      const type = params.type === undefined ? undefined : adaptMessageType(params.type, ctx.state);
      await ctx.request(
        "PATCH",
        path`/scheduled_messages/${scheduled_message_id}`,
        { ...params, type },
        options,
      );
    },

    /** Cancel a scheduled message (DELETE /scheduled_messages/{id}). */
    async delete(scheduled_message_id: number, options: CallOptions = {}): Promise<void> {
      need("Deleting a scheduled message (DELETE /scheduled_messages/{scheduled_message_id})");
      await ctx.request("DELETE", path`/scheduled_messages/${scheduled_message_id}`, {}, options);
    },
  };
}

export type ScheduledMessagesApi = ReturnType<typeof scheduledMessagesApi>;
