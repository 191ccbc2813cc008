/**
 * Emoji in a message's text as the server's Markdown shows them: by name (`:tada:`), as emoji
 * characters (✅), and emoticons (`:)`) for a sender who has the server translate them. Matched in
 * text escaped for HTML, outside code.
 */
import { CANONICAL_NAMES, EMOJI_CODES, ZULIP_EMOJI } from "./emoji.ts";

/**
 * An emoji character, or a sequence of them joined by U+200D, as the server's pattern finds one
 * (after Unicode's emoji regex): a pair of regional indicators (a flag), or an emoji with a skin
 * tone, U+FE0F (and a keycap) or tag characters after it.
 */
const ONE_EMOJI = String.raw`\p{RI}\p{RI}|\p{Emoji}(?:\p{Emoji_Modifier}|\uFE0F\u20E3?|[\u{E0020}-\u{E007E}]+\u{E007F})?`;
const EMOJI_NAME_OR_CHARACTER = new RegExp(`:([\\w+-]+):|(?:${ONE_EMOJI})(?:\u200D(?:${ONE_EMOJI}))*`, "gu");
/** A character shown as text unless U+FE0F follows it (a digit, `#`, `©`, `↔`): the server leaves it. */
const TEXT_PRESENTATION = /^\P{Emoji_Presentation}\u20E3?$/u;

/** The emoticons the server translates, when the sender asks it to, and the emoji each becomes. */
const EMOTICONS: Record<string, string> = {
  ":)": "smile",
  "(:": "smile",
  ":(": "frown",
  "&lt;3": "heart",
  ":|": "neutral",
  ":/": "confused",
  ";)": "wink",
  ":D": "grinning",
  ":o": "open_mouth",
  ":O": "open_mouth",
  ":p": "stuck_out_tongue",
  ":P": "stuck_out_tongue",
};
/** An emoticon alone between the start or end, spaces, quotes, brackets and punctuation (in escaped text). */
const EMOTICON =
  /(?<=^|[,.;?!()[\] "'\n\t])(?<!&(?:amp|lt|gt|quot);)(:\)|\(:|:\(|&lt;3|:\||:\/|;\)|:D|:o|:O|:p|:P)(?=$|[,.;?!()[\] "'\n\t])/g;

/**
 * `:name:` of an emoji the server knows, as the server shows it, an emoticon when the sender
 * translates them (`translateEmoticons`), and an emoji character the server knows, shown by its name; other names and
 * characters stay as written.
 */
export function emoji(text: string, translateEmoticons: boolean): string {
  const emoticons = translateEmoticons
    ? text.replace(EMOTICON, (emoticon: string) => `\uE001${EMOTICONS[emoticon]}\uE001`)
    : text;
  return emoticons
    .replace(EMOJI_NAME_OR_CHARACTER, (all, name?: string) => {
      if (name === undefined) {
        if (TEXT_PRESENTATION.test(all)) return all;
        const code = [...all.replaceAll("\uFE0F", "")].map((c) =>
          c.codePointAt(0)!.toString(16).padStart(4, "0"),
        );
        const canonical = CANONICAL_NAMES.get(code.join("-"));
        return canonical === undefined ? all : emojiSpan(canonical, code.join("-"));
      }
      if (name === ZULIP_EMOJI)
        return `<img alt=":zulip:" class="emoji" src="/static/generated/emoji/images/emoji/unicode/zulip.png" title="zulip">`;
      const code = Object.hasOwn(EMOJI_CODES, name) ? EMOJI_CODES[name] : undefined;
      return code === undefined ? all : emojiSpan(name, code);
    })
    .replace(/\uE001(\w+)\uE001/g, (_all, name: string) => emojiSpan(name, EMOJI_CODES[name]!));
}

function emojiSpan(name: string, code: string): string {
  const title = name.replaceAll("_", " ");
  return `<span aria-label="${title}" class="emoji emoji-${code}" role="img" title="${title}">:${name}:</span>`;
}
