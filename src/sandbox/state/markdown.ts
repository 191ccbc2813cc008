/**
 * A small Markdown renderer: enough of the server's dialect for bots to see plausible HTML and,
 * above all, for mentions to be found the way the server finds them (not inside code).
 * Supported: paragraphs, line breaks, fenced code / quote / spoiler blocks, headings, lists,
 * tables (markdown-structures.ts), `code`, **bold**, *italic*, ~~strike~~, links and bare
 * addresses (markdown-links.ts), emoji by name, emoji characters and emoticons
 * (markdown-emoji.ts), user / group / wildcard mentions, channel, topic and message links, <time:…>.
 */
import type { SandboxData, UserRecord } from "./data.ts";
import { escapeCode, escapeHtml, escapeText, unescapeHtml } from "./escape-html.ts";
import { emoji } from "./markdown-emoji.ts";
import { languageName } from "./markdown-languages.ts";
import { autolink, sanitizeUrl } from "./markdown-links.ts";
import { FENCE, separateLists } from "./markdown-lists.ts";
import { HEADING, RULE, structureAt } from "./markdown-structures.ts";
import { timeOf } from "./markdown-time.ts";
import { channelSlug, hashComponent } from "./narrow-url.ts";
import { setting } from "./user-settings.ts";

export interface Rendered {
  html: string;
  /** Users mentioned directly (not silently) or through a group. */
  mentionedUserIds: Set<number>;
  streamWildcard: boolean;
  topicWildcard: boolean;
}

const STREAM_WILDCARDS = new Set(["all", "everyone", "stream", "channel"]);

/** Where a message is rendered, beyond the sandbox's data. */
export interface RenderContext {
  /** The realm's address (`http://host:port`): a link into it becomes relative, as on the server. */
  realmUrl?: string | undefined;
  /** The sender's `translate_emoticons` setting: `:)` shows as `:smile:`, as on the server. */
  translateEmoticons?: boolean;
}

/** The context of a message `sender` sends (or sent, for an edit) in the realm at `realmUrl`. */
export function messageContext(realmUrl: string, sender: UserRecord | undefined): RenderContext {
  return {
    realmUrl,
    translateEmoticons: sender !== undefined && setting(sender, "translate_emoticons") === true,
  };
}

/**
 * What rendering finds, the sandbox's time (ms), which dates in `<time:…>` that leave parts out
 * take them from, and the context.
 */
type State = Rendered & { readonly now: number; readonly context: RenderContext };

export function renderMarkdown(
  data: SandboxData,
  source: string,
  now: number,
  context: RenderContext = {},
): Rendered {
  const state: State = {
    html: "",
    mentionedUserIds: new Set(),
    streamWildcard: false,
    topicWildcard: false,
    now,
    context,
  };
  const lines = separateLists(source.replaceAll("\r\n", "\n").split("\n"));
  const { mentionedUserIds, streamWildcard, topicWildcard } = state;
  return {
    html: renderBlocks(data, lines.join("\n"), state),
    mentionedUserIds,
    streamWildcard,
    topicWildcard,
  };
}

/**
 * A channel's or channel folder's description as the server renders it: Markdown, like a message,
 * at `now` (ms), the date a `<time:…>` that names none takes.
 */
export function renderDescription(data: SandboxData, text: string, now: number): string {
  return text === "" ? "" : renderMarkdown(data, text, now).html;
}

function renderBlocks(data: SandboxData, source: string, r: State): string {
  const lines = source.split("\n");
  const out: string[] = [];
  let para: string[] = [];
  const flush = () => {
    // As the server's paragraphs, the first line's leading spaces are dropped; the others keep theirs.
    if (para.length > 0) {
      para[0] = para[0]!.trimStart();
      out.push(`<p>${para.map((l) => inline(data, l, r)).join("<br>\n")}</p>`);
    }
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const [, marker, written = "", header] = fence;
      const lang = QUOTES.has(written.toLowerCase()) ? written.toLowerCase() : written;
      // The block's lines lose their trailing spaces; it ends at its own fence, alone on a line
      // (for a quote or spoiler, the first such line not closing a block opened inside it).
      const end = QUOTES.has(lang) ? blockEnd(lines, i + 1, marker!) : codeEnd(lines, i + 1, marker!);
      const body = lines.slice(i + 1, end).map((l) => l.trimEnd());
      i = end;
      // As on the server, a block without a line shows nothing.
      if (body.length === 0) continue;
      const inner = body.join("\n");
      if (lang === "quote" || lang === "quoted")
        out.push(`<blockquote>\n${renderBlocks(data, inner, r)}\n</blockquote>`);
      else if (lang === "spoiler")
        out.push(
          `<div class="spoiler-block"><div class="spoiler-header">\n${header ? `<p>${inline(data, header, r)}</p>\n` : ""}</div><div class="spoiler-content" aria-hidden="true">\n${renderBlocks(data, inner, r)}\n</div></div>`,
        );
      // The highlighter drops the code's leading and trailing blank lines.
      else
        out.push(
          `<div class="codehilite"${language(lang)}><pre><span></span><code>${escapeCode(inner.replace(/^\n+|\n+$/g, ""))}\n</code></pre></div>`,
        );
      continue;
    }
    if (quoteAt(lines, i)) {
      // A quote runs to the next blank line, lines without `>` too, but not to a heading or a rule
      // (which the server's block parser finds first); mentions in it are silent.
      flush();
      const quoted: string[] = [];
      const ends = (line: string) => line.trim() === "" || HEADING.test(line) || RULE.test(line);
      for (; i < lines.length && !ends(lines[i]!); i++)
        quoted.push(QUOTE_LINE.exec(lines[i]!)?.[1] ?? lines[i]!);
      i--;
      const silenced = quoted.map((l) =>
        l.replace(/@_?\*\*([^*]+)\*\*/g, "@_**$1**").replace(/@_?\*([^*]+)\*/g, "@_*$1*"),
      );
      out.push(`<blockquote>\n${renderBlocks(data, silenced.join("\n"), r)}\n</blockquote>`);
      continue;
    }
    const structure = structureAt(lines, i, para.length === 0, {
      blocks: (inner) => renderBlocks(data, inner, r),
      inline: (text) => inline(data, text, r),
    });
    if (structure !== undefined) {
      flush();
      out.push(structure.html);
      i += structure.used - 1;
      continue;
    }
    if (para.length === 0 && /^ {4}/.test(line)) {
      // A block indented by four spaces is code, up to a line indented less (blank lines inside kept).
      const code: string[] = [];
      for (; i < lines.length && (/^ {4}/.test(lines[i]!) || lines[i]!.trim() === ""); i++)
        code.push(lines[i]!.slice(4).trimEnd());
      i--;
      while (code.at(-1) === "") code.pop();
      out.push(
        `<div class="codehilite"><pre><span></span><code>${escapeCode(code.join("\n"))}\n</code></pre></div>`,
      );
      continue;
    }
    if (line.trim() === "") flush();
    else para.push(line);
  }
  flush();
  return out.join("\n");
}

const QUOTE_LINE = /^ {0,3}> ?(.*)$/;

/** The fenced blocks whose lines are Markdown; any other fenced block is code. */
const QUOTES = new Set(["quote", "quoted", "spoiler"]);

/** The line a code block opened by `marker` ends at (its fence alone), or the end. */
function codeEnd(lines: readonly string[], from: number, marker: string): number {
  let i = from;
  while (i < lines.length && lines[i]!.trimEnd() !== marker) i++;
  return i;
}

/**
 * The line a quote or spoiler block opened by `marker` ends at, as the server's fence handlers
 * nest: a fence line inside it opens a block of its own, which the next line of its own fence
 * closes (a code block takes every line up to it), so a quoted code block keeps its closing fence.
 */
function blockEnd(lines: readonly string[], from: number, marker: string): number {
  const open = [{ fence: marker, code: false }];
  for (let i = from; i < lines.length; i++) {
    const top = open.at(-1)!;
    if (lines[i]!.trimEnd() === top.fence) {
      open.pop();
      if (open.length === 0) return i;
    } else if (!top.code) {
      const fence = FENCE.exec(lines[i]!);
      if (fence) open.push({ fence: fence[1]!, code: !QUOTES.has((fence[2] ?? "").toLowerCase()) });
    }
  }
  return lines.length;
}

/** Whether a quote begins at `lines[at]`: a `>` line, unless it and the rest of its block are `>` alone. */
function quoteAt(lines: readonly string[], at: number): boolean {
  if (!QUOTE_LINE.test(lines[at]!)) return false;
  for (let i = at; i < lines.length && lines[i]!.trim() !== ""; i++)
    if (!/^ {0,3}>\s*$/.test(lines[i]!)) return true;
  return false;
}

function inline(data: SandboxData, text: string, r: State): string {
  // Code spans (between runs of as many backticks, spaces kept) are cut out first so mentions
  // inside them do not count, as on the server.
  let html = "";
  let from = 0;
  for (const span of text.matchAll(/(`+)(.+?)(?<!`)\1(?!`)/g)) {
    html += `${decorate(data, text.slice(from, span.index), r)}<code>${escapeText(span[2]!)}</code>`;
    from = span.index + span[0].length;
  }
  return html + decorate(data, text.slice(from), r);
}

function decorate(data: SandboxData, text: string, r: State): string {
  // As in the server's Markdown, a character reference written out (`&amp;`, `&#42;`) stays one.
  let html = escapeText(text).replace(/&amp;(#\d+|#x[0-9a-f]+|[a-z0-9]+);/gi, "&$1;");
  html = html.replace(
    /@(_?)\*\*([^*|]+?)(?:\|(\d+))?\*\*/g,
    (all, silent: string, name: string, id?: string) => {
      const lowered = name.toLowerCase();
      if (STREAM_WILDCARDS.has(lowered) || lowered === "topic") {
        if (!silent) {
          if (lowered === "topic") r.topicWildcard = true;
          else r.streamWildcard = true;
        }
        const cls = lowered === "topic" ? "topic-mention" : "user-mention";
        return `<span class="${cls}${silent ? " silent" : ""}" data-user-id="*">${silent ? "" : "@"}${name}</span>`;
      }
      const user = id
        ? data.users.find((u) => u.user_id === Number(id))
        : data.users.find((u) => escapeText(u.full_name) === name && u.is_active);
      if (!user) return all;
      if (!silent) r.mentionedUserIds.add(user.user_id);
      return `<span class="user-mention${silent ? " silent" : ""}" data-user-id="${user.user_id}">${silent ? "" : "@"}${escapeText(user.full_name)}</span>`;
    },
  );
  html = html.replace(/@(_?)\*([^*]+)\*/g, (all, silent: string, name: string) => {
    const group = data.userGroups.find((g) => escapeText(g.name) === name && !g.deactivated);
    if (!group) return all;
    if (!silent) for (const m of group.members) r.mentionedUserIds.add(m);
    return `<span class="user-group-mention${silent ? " silent" : ""}" data-user-group-id="${group.id}">${silent ? "" : "@"}${name}</span>`;
  });
  // #**channel**, #**channel>topic** and #**channel>topic@id** (a message), as the server links them.
  html = html.replace(
    /#\*\*((?:(?!&gt;)[^*])+)(?:&gt;([^*]*?)(?:@(\d+))?)?\*\*/g,
    (all, chan: string, topic?: string, id?: string) => {
      const stream = data.streams.find((s) => escapeText(s.name) === chan);
      if (!stream) return all;
      const channel = `/#narrow/channel/${channelSlug(stream)}`;
      const streamId = `data-stream-id="${stream.stream_id}"`;
      if (topic === undefined) return `<a class="stream" ${streamId} href="${channel}">#${chan}</a>`;
      const href = `${channel}/topic/${hashComponent(unescapeHtml(topic))}`;
      if (id) return `<a class="message-link" href="${href}/near/${id}">#${chan} &gt; ${topic} @ 💬</a>`;
      return `<a class="stream-topic" ${streamId} href="${href}">#${chan} &gt; ${topic}</a>`;
    },
  );
  // As the server's pattern, the time runs to the first `>`; its text is kept as written (no
  // bold or emoji inside), so it is set aside until the end.
  const kept: string[] = [];
  html = html.replace(/&lt;time:((?:(?!&gt;).)*?)&gt;/g, (_all, written: string) => {
    const at = timeOf(unescapeHtml(written), r.now);
    kept.push(
      at === undefined
        ? `<span class="timestamp-error">Invalid time format: ${written}</span>`
        : `<time datetime="${at}">${written}</time>`,
    );
    return `\uE000${kept.length - 1}\uE000`;
  });
  // The server's emphasis: no space just inside the asterisks, none of `*`, `^` within; bold may
  // hold italic; three asterisks are both.
  html = html.replace(/\*\*\*(?!\s)([^*^\n]+)(?<!\s)\*\*\*/g, "<strong><em>$1</em></strong>");
  html = html.replace(/\*\*((?:[^*]|\*(?!\*))+?)\*\*/g, "<strong>$1</strong>");
  html = html.replace(/(?<!~)~~([^~\n]+?)~~(?!~)/g, "<del>$1</del>");
  html = html.replace(/\*(?!\s)([^*^\n]+)(?<!\s)\*/g, "<em>$1</em>");
  // A link to an address of a scheme the server refuses stays text; one without text shows its address.
  html = html.replace(/\[([^\]]*)\]\(([^)\s]+)\)/g, (all, label: string, href: string) => {
    const to = address(href, r);
    if (to === undefined) return all;
    // The text of a link goes on to the server's later patterns: emoji and emoticons.
    const text =
      label.trim() === ""
        ? to
        : betweenTags(label, (part) => emoji(part, r.context.translateEmoticons === true));
    return `<a href="${to}">${text}</a>`;
  });
  // Bare addresses, then emoji by name, in the text between tags, outside links (an address is
  // kept as written).
  const bare = (url: string) => `<a href="${address(url, r) ?? url}">${url}</a>`;
  let inLink = false;
  return html
    .split(/(<[^>]*>)/)
    .map((part, i) => {
      if (i % 2 === 0)
        return inLink
          ? part
          : autolink(part, bare, (text) => emoji(text, r.context.translateEmoticons === true));
      if (/^<a[\s>]/.test(part)) inLink = true;
      else if (part === "</a>") inLink = false;
      return part;
    })
    .join("")
    .replace(/\uE000(\d+)\uE000/g, (_all, n: string) => kept[Number(n)]!);
}

/** A code block's `data-code-language` attribute (with its space), empty when none is named. */
function language(lang: string): string {
  if (lang === "") return "";
  return ` data-code-language="${escapeHtml(languageName(lang))}"`;
}

/**
 * A link's address (escaped) as the server writes it in `href`, or undefined when it refuses its
 * scheme: one into the realm's narrows (`/#…`) or uploads (`/user_uploads/…`) becomes relative, so
 * that it opens in the same window.
 */
function address(href: string, r: State): string | undefined {
  const url = sanitizeUrl(unescapeHtml(href));
  if (url === undefined) return undefined;
  const prefix = r.context.realmUrl === undefined ? undefined : `${r.context.realmUrl}/`;
  const local =
    prefix && (url.startsWith(`${prefix}#`) || url.startsWith(`${prefix}user_uploads/`))
      ? url.slice(prefix.length)
      : url;
  return escapeText(local).replaceAll('"', "&quot;");
}

/** `html` with `change` applied to the text between its tags. */
function betweenTags(html: string, change: (text: string) => string): string {
  return html
    .split(/(<[^>]*>)/)
    .map((part, i) => (i % 2 === 0 ? change(part) : part))
    .join("");
}
