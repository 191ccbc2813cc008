/** Typing notifications (POST /typing), adapted to the server's feature level. */
import type { Params } from "../encode.ts";
import { requireFeature, type ServerState, supports } from "../feature-level.ts";
import type { CallOptions, ResourceContext } from "../transport.ts";

export interface TypingParams {
  op: "start" | "stop";
  type?: "direct" | "stream" | "channel";
  to?: readonly number[];
  stream_id?: number;
  topic?: string;
}

/** POST /typing's parameters in the form the server's level understands. */
function adaptTyping(params: TypingParams, state: ServerState): Params {
  const isChannel = params.type === "stream" || params.type === "channel";
  if (!isChannel) {
    // Before FL 174 the direct type was spelled "private" (and was the default).
    const type = params.type === undefined || supports(state, "directType") ? params.type : "private";
    return { type, op: params.op, to: params.to };
  }
  requireFeature(state, "typingToChannel", "Typing notifications in channels");
  if (!supports(state, "typingStreamId")) {
    // Before FL 215, channel typing named the channel in `to` as a one-element list.
    const to = params.stream_id === undefined ? undefined : [params.stream_id];
    return { type: "stream", op: params.op, to, topic: params.topic };
  }
  const type = params.type === "channel" && !supports(state, "channelType") ? "stream" : params.type;
  return { type, op: params.op, stream_id: params.stream_id, topic: params.topic };
}

export function typingApi(ctx: ResourceContext) {
  return {
    /**
     * Start or stop a typing notification. Direct: `to` is a list of user ids. Channel:
     * `stream_id` and `topic`.
     */
    async set(params: TypingParams, options: CallOptions = {}): Promise<void> {
      return ctx.call("POST", "/typing", adaptTyping(params, ctx.state), options);
    },
  };
}

export type TypingApi = ReturnType<typeof typingApi>;
