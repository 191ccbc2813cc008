/** Emoji reactions on messages. */
import { path } from "../encode.ts";
import type { CallOptions, ResourceContext } from "./context.ts";

export interface ReactionParams {
  emoji_name: string;
  emoji_code?: string;
  reaction_type?: "unicode_emoji" | "realm_emoji" | "zulip_extra_emoji";
}

export function reactionsApi(ctx: ResourceContext) {
  return {
    /**
     * React to a message (POST /messages/{id}/reactions).
     *
     * @example
     * ```ts
     * await client.reactions.add(42, { emoji_name: "thumbs_up" });
     * ```
     */
    async add(message_id: number, params: ReactionParams, options: CallOptions = {}): Promise<void> {
      await ctx.request("POST", path`/messages/${message_id}/reactions`, { ...params }, options);
    },

    /** Remove the account's reaction (DELETE /messages/{id}/reactions). */
    async remove(
      message_id: number,
      params: Partial<ReactionParams>,
      options: CallOptions = {},
    ): Promise<void> {
      await ctx.request("DELETE", path`/messages/${message_id}/reactions`, { ...params }, options);
    },
  };
}

export type ReactionsApi = ReturnType<typeof reactionsApi>;
