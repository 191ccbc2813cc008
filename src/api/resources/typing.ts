/** Typing notifications (POST /typing), adapted to the server's feature level. */
import { adaptTyping, type TypingParams } from "../feature-level.ts";
import type { CallOptions, ResourceContext } from "./context.ts";

export type { TypingParams };

export function typingApi(ctx: ResourceContext) {
  return {
    /**
     * Start or stop a typing notification. Direct: `to` is a list of user ids. Channel:
     * `stream_id` and `topic`.
     */
    async set(params: TypingParams, options: CallOptions = {}): Promise<void> {
      await ctx.request("POST", "/typing", adaptTyping(params, ctx.state), options);
    },
  };
}

export type TypingApi = ReturnType<typeof typingApi>;
