/**
 * Adapting requests to the server's feature level (the seed's Versioning section, with the levels
 * in src/wire/feature-levels.ts). An unknown level means "modern": send today's form.
 */
import { type FeatureName, featureLevels } from "../wire/feature-levels.ts";
import type { Params } from "./encode.ts";
import { UnsupportedFeatureError } from "./errors.ts";

/** What the client knows about the server and its own account; both start unknown. */
export interface ServerState {
  /** `zulip_feature_level`, learned from events.register or server.settings, or set by hand. */
  featureLevel: number | undefined;
  /** Whether the client's account is a bot, learned from users.me() or set by hand. */
  isBot: boolean | undefined;
}

/** True when the server is known to have `feature`, or its level is unknown. */
export function supports(state: ServerState, feature: FeatureName): boolean {
  return state.featureLevel === undefined || state.featureLevel >= featureLevels[feature];
}

/** Throw `UnsupportedFeatureError` when the server is known to be too old for `feature`. */
export function requireFeature(state: ServerState, feature: FeatureName, what: string): void {
  if (supports(state, feature)) return;
  throw new UnsupportedFeatureError({
    feature,
    what,
    requiredLevel: featureLevels[feature],
    serverLevel: state.featureLevel ?? 0,
  });
}

export type MessageType = "channel" | "stream" | "direct" | "private";

/** Message and scheduled-message `type`: `channel` → `stream` before FL 248, `direct` → `private` before 174. */
export function adaptMessageType(type: MessageType, state: ServerState): MessageType {
  if (type === "channel" && !supports(state, "channelType")) return "stream";
  if (type === "direct" && !supports(state, "directType")) return "private";
  return type;
}

export interface TypingParams {
  op: "start" | "stop";
  type?: "direct" | "stream" | "channel";
  to?: readonly number[];
  stream_id?: number;
  topic?: string;
}

/** POST /typing's parameters in the form the server's level understands. */
export function adaptTyping(params: TypingParams, state: ServerState): Params {
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
