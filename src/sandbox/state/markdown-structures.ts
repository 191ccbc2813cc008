/**
 * The block structures of the server's Markdown beyond paragraphs, code and quotes: headings,
 * tables, horizontal rules, and bulleted and numbered lists (which, as on the server, need no blank
 * line before them). Each takes the lines from where it begins and says how many it used; what is inside a
 * list item or a table cell is rendered by the caller's functions.
 */
import { list, type Renderers, type Structure, startsList } from "./markdown-lists.ts";

const HEADING = /^(#{1,6}) +(.*?)(?: +#+)? *$/;
/** A horizontal rule: three or more `-`, `_` or `*` (with up to two spaces after each). */
const RULE = /^ {0,3}(?:(?:-+ {0,2}){3,}|(?:_+ {0,2}){3,}|(?:\*+ {0,2}){3,})$/;
const DELIMITER = /^ *\|? *:?-+:? *(?:\| *:?-+:? *)*\|? *$/;

/** A heading, list or table beginning at `lines[at]`; undefined when none does. */
export function structureAt(lines: readonly string[], at: number, render: Renderers): Structure | undefined {
  const line = lines[at]!;
  const heading = HEADING.exec(line);
  if (heading) {
    const level = heading[1]!.length;
    return { html: `<h${level}>${render.inline(heading[2]!)}</h${level}>`, used: 1 };
  }
  const next = lines[at + 1];
  if (line.includes("|") && next?.includes("-") && DELIMITER.test(next)) return table(lines, at, render);
  if (RULE.test(line)) return { html: "<hr>", used: 1 };
  if (startsList(line)) return list(lines, at, render, { rule: RULE, heading: HEADING });
  return undefined;
}

/** A table: a header row, its delimiter row (which sets each column's alignment), then its rows. */
function table(lines: readonly string[], at: number, render: Renderers): Structure {
  const header = cellsOf(lines[at]!);
  const aligns = cellsOf(lines[at + 1]!).map((c) =>
    c.startsWith(":") && c.endsWith(":")
      ? "center"
      : c.endsWith(":")
        ? "right"
        : c.startsWith(":")
          ? "left"
          : "",
  );
  let i = at + 2;
  const rows: string[][] = [];
  for (; i < lines.length && lines[i]!.includes("|") && lines[i]!.trim() !== ""; i++)
    rows.push(cellsOf(lines[i]!));
  const cell = (tag: string, text: string, column: number) => {
    const align = aligns[column] ? ` style="text-align: ${aligns[column]};"` : "";
    return `<${tag}${align}>${render.inline(text)}</${tag}>`;
  };
  const row = (tag: string, cells: string[]) =>
    `<tr>\n${header.map((_, c) => cell(tag, cells[c] ?? "", c)).join("\n")}\n</tr>`;
  const body = rows.length > 0 ? `\n<tbody>\n${rows.map((r) => row("td", r)).join("\n")}\n</tbody>` : "";
  return { html: `<table>\n<thead>\n${row("th", header)}\n</thead>${body}\n</table>`, used: i - at };
}

/** A table row's cells: split at each `|` not escaped, the row's outer pipes left out, trimmed. */
function cellsOf(line: string): string[] {
  const cells = line
    .trim()
    .replace(/^\|/, "")
    .replace(/(?<!\\)\|$/, "")
    .split(/(?<!\\)\|/);
  return cells.map((c) => c.trim().replaceAll("\\|", "|"));
}
