/**
 * Feature levels (FL) at which the interface changed, from the seed's Versioning section.
 * The client adapts its requests to older servers with these; the sandbox can imitate an
 * older server by reporting a lower level.
 */
export const featureLevels = {
  /** Typing notifications to channels. */
  typingToChannel: 58,
  /** `type: "direct"` accepted for typing (and messages); before it, `private`. */
  directType: 174,
  /** Typing to channels takes `stream_id`; `to` no longer used for channels; `private` rejected. */
  typingStreamId: 215,
  /** `channel` accepted as a message/typing type value; before it, `stream`. */
  channelType: 248,
  scheduledMessages: 179,
  scheduledMessagesEditEndpoint: 184,
  emptyTopicValid: 334,
  usersByEmail: 39,
  usersByRealEmail: 302,
  savedSnippets: 297,
  savedSnippetsEdit: 368,
  messageReport: 382,
  playgrounds: 49,
  playgroundUrlTemplate: 196,
  userGroupSubgroupsEndpoint: 127,
  userGroupMembersSubgroupParams: 311,
  userGroupBotsAllowed: 496,
  channelFolders: 389,
  channelsIncludeAll: 356,
  /** POST /register's realm state carries `realm_uuid`, the organization's unique id. */
  realmUuid: 466,
} as const;

export type FeatureName = keyof typeof featureLevels;

/**
 * The feature level the sandbox reports unless an org file says otherwise: the newest level the
 * seed names (bots may update user groups from 496). The sandbox behaves as servers of feature
 * level 442 and later do.
 */
export const SANDBOX_FEATURE_LEVEL = 496;
