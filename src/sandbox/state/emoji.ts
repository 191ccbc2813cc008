/**
 * The sandbox's emoji: a set of the server's unicode emoji names (aliases included) and their codes,
 * the ones people and bots commonly react and write with ({@link EMOJI_CODES}, in emoji-names.ts),
 * plus the server's one extra emoji, `zulip`. The sandbox has no custom (realm) emoji. Names and
 * codes follow the server's emoji set; a name missing here is refused as the server refuses an
 * unknown one.
 */

import { CANONICAL_NAMES, EMOJI_CODES } from "./emoji-names.ts";

export { CANONICAL_NAMES, EMOJI_CODES };

const CODES = new Set(Object.values(EMOJI_CODES));

/** Where the sandbox serves its emoji data (the register response's `server_emoji_data_url`). */
export const EMOJI_DATA_PATH = "/static/emoji.json";

/**
 * The file `server_emoji_data_url` names: each unicode emoji code with its names, the canonical
 * one first (the first listed in {@link EMOJI_CODES}).
 */
export function emojiData(): { code_to_names: Record<string, string[]> } {
  const byCode: Record<string, string[]> = {};
  for (const [name, code] of Object.entries(EMOJI_CODES)) byCode[code] = [...(byCode[code] ?? []), name];
  return { code_to_names: byCode };
}

/** The server's only `zulip_extra_emoji`: its name is its code. */
export const ZULIP_EMOJI = "zulip";

export type ReactionType = "unicode_emoji" | "realm_emoji" | "zulip_extra_emoji";

/** What an emoji name stands for (the server's `get_emoji_data`), or undefined when none. */
export function emojiByName(name: string): { emoji_code: string; reaction_type: ReactionType } | undefined {
  if (name === ZULIP_EMOJI) return { emoji_code: ZULIP_EMOJI, reaction_type: "zulip_extra_emoji" };
  const code = Object.hasOwn(EMOJI_CODES, name) ? EMOJI_CODES[name] : undefined;
  return code === undefined ? undefined : { emoji_code: code, reaction_type: "unicode_emoji" };
}

/**
 * Why a new reaction's name, code and type do not go together (the server's `check_emoji_request`),
 * or undefined when they do.
 */
export function emojiProblem(name: string, code: string, type: string): string | undefined {
  switch (type) {
    case "realm_emoji":
      return "Invalid custom emoji";
    case "zulip_extra_emoji":
      if (code !== ZULIP_EMOJI) return "Invalid emoji code";
      return name === code ? undefined : "Invalid emoji name";
    case "unicode_emoji":
      if (!CODES.has(code)) return "Invalid emoji code";
      return emojiByName(name)?.emoji_code === code ? undefined : "Invalid emoji name";
    default:
      return "Invalid emoji type";
  }
}
