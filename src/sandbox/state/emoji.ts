/**
 * The sandbox's emoji: a small set of the server's unicode emoji names (aliases included) and their
 * codes, the ones bots react with, plus the server's one extra emoji, `zulip`. The sandbox has no
 * custom (realm) emoji. Names and codes follow the server's emoji set; a name missing here is
 * refused as the server refuses an unknown one.
 */

/** Unicode emoji name → code point(s), as the server's `name_to_codepoint`. */
export const EMOJI_CODES: Readonly<Record<string, string>> = {
  "+1": "1f44d",
  thumbs_up: "1f44d",
  like: "1f44d",
  "-1": "1f44e",
  thumbs_down: "1f44e",
  tada: "1f389",
  heart: "2764",
  smile: "1f604",
  slight_smile: "1f642",
  joy: "1f602",
  check: "2705",
  check_mark: "2714",
  cross_mark: "274c",
  x: "274c",
  eyes: "1f440",
  octopus: "1f419",
  rocket: "1f680",
  fire: "1f525",
  star: "2b50",
  warning: "26a0",
  wave: "1f44b",
  thinking: "1f914",
  ok: "1f197",
  working_on_it: "1f6e0",
  hammer_and_wrench: "1f6e0",
  hourglass: "231b",
  robot: "1f916",
  clock: "1f570",
  bell: "1f514",
  question: "2753",
  exclamation: "2757",
  clap: "1f44f",
  pray: "1f64f",
  "100": "1f4af",
};

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
