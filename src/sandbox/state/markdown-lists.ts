/**
 * Lists as the server's Markdown (Python-Markdown's "sane" lists, with two-space indents) makes
 * them. A list goes on past a blank line when an item of its kind or an indented block follows:
 * it is then "loose", and the items on either side of that blank line hold their text in `<p>`.
 * Within a block, a line indented by two or three spaces that starts an item opens a list nested in
 * the item before, and any other line goes on with the item's text.
 */

/** Renders Markdown blocks (a list item and what is under it) and inline text (cells, headings). */
export interface Renderers {
  blocks(source: string): string;
  inline(text: string): string;
}

/** A structure's HTML, and how many lines (from the one it began at) it used. */
export interface Structure {
  html: string;
  used: number;
}

/** An item's first line: its marker (a bullet, or a number) after at most one space. */
const ITEM = /^ ?(?:([*+-])|(\d+)\.) +(.*)$/;
/** A nested item's first line, under the item before. */
const NESTED = /^ {2,3}(?:\d+\.|[*+-]) +/;
/** Any line the server takes for a list item when it looks for lists right after other lines. */
const ANY_ITEM = /^ *([*+-]|\d\.) +/;
/**
 * A fenced block's first line as the server knows it: the fence, then maybe a language (`py`,
 * `{.js}`) and a header (a spoiler's), with no backtick or tilde after the fence (```` ```x``` ````
 * is inline code). The server takes fenced blocks out before it looks for lists.
 */
export const FENCE = /^(`{3,}|~{3,}) *(?:\{?\.?([\w+,\-./#]+) *([^ ~`][^~`]*)?\}?)?$/;

/** Where the server's block parsing stops a list's block: a horizontal rule or a heading. */
export interface ListEnds {
  rule: RegExp;
  heading: RegExp;
}

/** Whether `line` begins a list (a bullet or a number item). */
export function startsList(line: string): boolean {
  return ITEM.test(line);
}

interface Item {
  /** The item's own lines (its marker cut off), then the blocks under it (each its lines, detabbed). */
  lines: string[];
  under: string[][];
  loose: boolean;
}

/**
 * The server's step before block parsing: a blank line goes between a line and an item right after
 * it, unless both are items of one kind (bullets, or numbers), so a list needs no blank line before
 * it, and a list of the other kind starts a list of its own. Lines in a code block are left alone.
 */
export function separateLists(lines: readonly string[]): string[] {
  const out: string[] = [];
  const fences: { marker: string; code: boolean }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      const [, marker, lang = ""] = fence;
      if (lang === "" && fences.at(-1)?.marker === marker) fences.pop();
      else fences.push({ marker: marker!, code: lang !== "quote" && lang !== "quoted" });
    }
    out.push(line);
    const next = lines[i + 1];
    if (next === undefined || line === "" || fences.some((f) => f.code)) continue;
    const here = ANY_ITEM.exec(line);
    const after = ANY_ITEM.exec(next);
    if (after && (!here || (here[1]!.length === 1) !== (after[1]!.length === 1))) out.push("");
  }
  return out;
}

/** The list that begins at `lines[at]` (an item line), with the blocks it takes after blank lines. */
export function list(lines: readonly string[], at: number, render: Renderers, ends: ListEnds): Structure {
  const first = ITEM.exec(lines[at]!)!;
  const ordered = first[2] !== undefined;
  const ofKind = (line: string) => {
    const item = ITEM.exec(line);
    return item !== null && (item[2] !== undefined) === ordered && !ends.rule.test(line);
  };
  /** The end of the block starting at `from`: a blank line, a rule, a heading or a code fence. */
  const blockEnd = (from: number) => {
    let end = from + 1;
    for (; end < lines.length; end++) {
      const line = lines[end]!;
      if (line.trim() === "" || ends.rule.test(line) || ends.heading.test(line) || FENCE.test(line)) break;
    }
    return end;
  };
  const items: Item[] = [];
  /** The items of the block `lines[from..end)`; after a blank line, the first of them is loose too. */
  const itemsOf = (from: number, end: number, afterBlank: boolean) => {
    if (afterBlank) items.at(-1)!.loose = true;
    let nested: string[] | undefined;
    const closeNested = () => {
      if (nested) items.at(-1)!.under.push(detab(nested));
      nested = undefined;
    };
    for (let j = from; j < end; j++) {
      const line = lines[j]!;
      if (ofKind(line)) {
        closeNested();
        items.push({ lines: [ITEM.exec(line)![3]!], under: [], loose: afterBlank && j === from });
      } else if (nested) nested.push(line);
      else if (NESTED.test(line)) nested = [line];
      else items.at(-1)!.lines.push(line);
    }
    closeNested();
  };
  let i = blockEnd(at);
  itemsOf(at, i, false);
  for (;;) {
    let next = i;
    while (next < lines.length && lines[next]!.trim() === "") next++;
    if (next === i || next === lines.length) break;
    const end = blockEnd(next);
    if (ofKind(lines[next]!)) itemsOf(next, end, true);
    else if (/^ {2}/.test(lines[next]!)) {
      // A block indented under the list belongs to its last item, which is then loose; indented
      // by four spaces or more, to the list nested in that item, if there is one.
      const last = items.at(-1)!;
      const block = detab(lines.slice(next, end));
      const deeper = /^ {2}/.test(block[0]!);
      const inner = last.under.at(-1);
      if (deeper && inner && startsList(inner[0]!)) inner.push("", ...block);
      else last.under.push(block);
      if (!deeper) last.loose = true;
    } else break;
    i = end;
  }
  const start = ordered && first[2] !== "1" ? ` start="${Number(first[2])}"` : "";
  const tag = ordered ? "ol" : "ul";
  const html = items.map((item) => {
    const own = render.blocks(item.lines.join("\n"));
    // A tight item holds its first paragraph's text directly, as the server's list state does.
    const tight = item.loose ? undefined : /^<p>([\s\S]*?)<\/p>(?:\n|$)/.exec(own);
    const under = item.under.map((block) => render.blocks(block.join("\n")));
    const children = [tight ? own.slice(tight[0].length) : own, ...under].filter((c) => c !== "");
    const text = tight ? tight[1] : children.length > 0 ? "\n" : "";
    return `<li>${text}${children.map((c) => `${c}\n`).join("")}</li>`;
  });
  return { html: `<${tag}${start}>\n${html.join("\n")}\n</${tag}>`, used: i - at };
}

/** A block's lines with the two spaces of one list level taken off those that have them. */
function detab(lines: readonly string[]): string[] {
  return lines.map((l) => (l.startsWith("  ") ? l.slice(2) : l));
}
