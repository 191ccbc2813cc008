/** Text made safe inside HTML: the five characters that could end a text or an attribute, escaped. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#x27;");
}

/** Text as the server's Markdown writes it between tags: `&`, `<` and `>` escaped, quotes kept. */
export function escapeText(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** A code block's text as the server's highlighter writes it: quotes as `&quot;` and `&#39;`. */
export function escapeCode(text: string): string {
  return escapeText(text).replaceAll('"', "&quot;").replaceAll("'", "&#39;");
}

const UNESCAPED: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#x27": "'" };

/** The text `escapeHtml` was given back. */
export function unescapeHtml(html: string): string {
  return html.replace(/&(amp|lt|gt|quot|#x27);/g, (_all, name: string) => UNESCAPED[name]!);
}
