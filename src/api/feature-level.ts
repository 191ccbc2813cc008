/**
 * Adapting requests to the server's feature level (src/wire/feature-levels.ts). An unknown level
 * means "modern": send today's form.
 */
import { type FeatureName, featureLevels } from "../wire/feature-levels.ts";
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
