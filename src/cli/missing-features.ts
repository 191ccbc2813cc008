/**
 * Which bothost features a server is too old for, by feature level (src/wire/feature-levels.ts),
 * in words a bot author recognises. `bothost check` lists them per bot.
 */
import { type FeatureName, featureLevels } from "../wire/feature-levels.ts";

/** The features worth naming to a bot author: what calls or helpers stop working below the level. */
const described: readonly { feature: FeatureName; name: string }[] = [
  { feature: "usersByEmail", name: "user lookup by email" },
  { feature: "playgrounds", name: "code playgrounds" },
  { feature: "typingToChannel", name: "typing notifications in channels" },
  { feature: "scheduledMessages", name: "scheduled messages" },
  { feature: "scheduledMessagesEditEndpoint", name: "editing scheduled messages" },
  { feature: "savedSnippets", name: "saved snippets" },
  { feature: "usersByRealEmail", name: "user lookup by real email" },
  { feature: "emptyTopicValid", name: "empty topic names" },
  { feature: "savedSnippetsEdit", name: "editing saved snippets" },
  { feature: "messageReport", name: "message reports" },
  { feature: "channelFolders", name: "channel folders" },
  { feature: "userGroupBotsAllowed", name: "bots updating user groups" },
];

/**
 * The features a server at `featureLevel` lacks, oldest requirement first, each as
 * `"<name> (FL <level>)"`.
 *
 * @example
 * ```ts
 * missingFeatures(300); // ["message reports (FL 382)", "channel folders (FL 389)", …]
 * ```
 */
export function missingFeatures(featureLevel: number): string[] {
  return described
    .map(({ feature, name }) => ({ name, level: featureLevels[feature] }))
    .filter(({ level }) => featureLevel < level)
    .sort((a, b) => a.level - b.level)
    .map(({ name, level }) => `${name} (FL ${level})`);
}
