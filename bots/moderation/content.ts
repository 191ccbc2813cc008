/**
 * What the moderation rules read from message Markdown: links, user and wildcard mentions, and a
 * normalised form for comparing cross-posts. Code blocks and inline code are ignored, as the
 * server renders neither links nor mentions inside them.
 */

const FENCED = /^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:\n {0,3}\1[`~]*[ \t]*(?=\n|$)|$)/gm;
const INLINE_CODE = /(`+)[^`]*?\1/g;
const LINK = /\b(?:https?:\/\/|www\.)[^\s<>()[\]]+/i;
/** `@**Name**` or `@**Name|12**`; a silent `@_**Name**` notifies nobody and is not counted. */
const MENTION = /(^|[^_\w])@\*\*([^*\n]+)\*\*/g;
const WILDCARDS = new Set(["all", "everyone", "channel", "stream", "topic"]);

/** The text with code removed (what the rules look at). */
export function withoutCode(content: string): string {
  return content.replace(FENCED, " ").replace(INLINE_CODE, " ");
}

const LINKS = new RegExp(LINK.source, "gi");

/** How many web links the Markdown contains. */
export function links(text: string): number {
  return text.match(LINKS)?.length ?? 0;
}

/** Whether the Markdown contains a web link. */
export function hasLink(text: string): boolean {
  return LINK.test(text);
}

/** Distinct users mentioned (by name or name|id) and whether a wildcard mention is used. */
export function mentions(text: string): { users: number; wildcard: boolean } {
  const users = new Set<string>();
  let wildcard = false;
  for (const m of text.matchAll(MENTION)) {
    const name = (m[2] ?? "").trim().toLowerCase();
    if (WILDCARDS.has(name)) wildcard = true;
    else users.add(/\|\d+$/.test(name) ? name.slice(name.lastIndexOf("|")) : name);
  }
  return { users: users.size, wildcard };
}

/** Lower case, whitespace collapsed: two posts are "the same message" when these are equal. */
export function normalized(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}
