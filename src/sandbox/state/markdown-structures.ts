/**
 * The block structures of the server's Markdown beyond paragraphs, code and quotes: headings,
 * tables, horizontal rules, and bulleted and numbered lists (which, as on the server, need no blank
 * line before them). Each takes the lines from where it begins and says how many it used; what is inside a
 * list item or a table cell is rendered by the caller's functions.
 */
import { list, type Renderers, type Structure, startsList } from "./markdown-lists.ts";

/** A heading: one to six `#` and a space. */
export const HEADING = /^(#{1,6}) +(.*?)(?: +#+)? *$/;
/** A horizontal rule: three or more `-`, `_` or `*` (with up to two spaces after each). */
export const RULE = /^ {0,3}(?:(?:-+ {0,2}){3,}|(?:_+ {0,2}){3,}|(?:\*+ {0,2}){3,})$/;
/** A table row's last `|`, unless escaped. */
const END_BORDER = /(?<!\\)(?:\\\\)*\|$/;

/**
 * A heading, list or table beginning at `lines[at]`; undefined when none does. As in the server's
 * block parser, a heading or a rule may follow lines of text, while a list or a table begins only
 * at the start of a block (`atStart`): after a blank line, a heading or a rule.
 */
export function structureAt(
  lines: readonly string[],
  at: number,
  atStart: boolean,
  render: Renderers,
): Structure | undefined {
  const line = lines[at]!;
  const heading = HEADING.exec(line);
  if (heading) {
    const level = heading[1]!.length;
    return { html: `<h${level}>${render.inline(heading[2]!)}</h${level}>`, used: 1 };
  }
  if (!atStart) return RULE.test(line) ? { html: "<hr>", used: 1 } : undefined;
  const table = tableAt(lines, at, render);
  if (table) return table;
  if (RULE.test(line)) return { html: "<hr>", used: 1 };
  if (startsList(line)) return list(lines, at, render, { rule: RULE, heading: HEADING });
  return undefined;
}

/**
 * The table beginning at `lines[at]`, as the server's table extension finds one: a header row of
 * two cells or more (or of one, framed by `|`, when every row is), then a delimiter row of as many
 * cells (of `-`, `:` and spaces, which set each column's alignment). Every further line of the
 * block is a row, its cells cut or filled to the header's; a table without rows has one empty row.
 */
function tableAt(lines: readonly string[], at: number, render: Renderers): Structure | undefined {
  let end = at + 1;
  while (end < lines.length && lines[end]!.trim() !== "" && !HEADING.test(lines[end]!)) end++;
  const rows = lines.slice(at, end).map((l) => l.trim());
  if (rows.length < 2) return undefined;
  const border = rows[0]!.startsWith("|") || END_BORDER.test(rows[0]!);
  const header = cellsOf(rows[0]!, border);
  const framed = (row: string) => row.startsWith("|") || END_BORDER.test(row);
  if (header.length < 2 && !(header.length === 1 && border && rows.slice(1).every(framed))) return undefined;
  const delimiter = cellsOf(rows[1]!, border);
  if (delimiter.length !== header.length || !/^[|:\- ]*$/.test(delimiter.join(""))) return undefined;
  const aligns = delimiter.map((c) => {
    const cell = c.trim();
    if (cell.startsWith(":") && cell.endsWith(":")) return "center";
    return cell.endsWith(":") ? "right" : cell.startsWith(":") ? "left" : "";
  });
  const cell = (tag: string, text: string, column: number) => {
    const align = aligns[column] ? ` style="text-align: ${aligns[column]};"` : "";
    return `<${tag}${align}>${render.inline(text.trim())}</${tag}>`;
  };
  const row = (tag: string, cells: string[]) =>
    `<tr>\n${aligns.map((_, c) => cell(tag, cells[c] ?? "", c)).join("\n")}\n</tr>`;
  const body = rows.length > 2 ? rows.slice(2).map((r) => row("td", cellsOf(r, border))) : [emptyRow(aligns)];
  return {
    html: `<table>\n<thead>\n${row("th", header)}\n</thead>\n<tbody>\n${body.join("\n")}\n</tbody>\n</table>`,
    used: end - at,
  };
}

function emptyRow(aligns: readonly string[]): string {
  return `<tr>\n${aligns.map(() => "<td></td>").join("\n")}\n</tr>`;
}

/**
 * A table row's cells: the row's outer `|` left out when the header has them, then split at each
 * `|` that is neither escaped (`\|`, kept as written, as the server has no backslash escapes) nor
 * inside a code span.
 */
function cellsOf(line: string, border: boolean): string[] {
  let row = line;
  if (border) row = row.replace(/^\|/, "").replace(END_BORDER, (bar) => bar.slice(0, -1));
  const code = [...row.matchAll(/(?<!\\)(`+)[\s\S]*?(?<!`)\1(?!`)/g)].map((m) => [
    m.index,
    m.index + m[0].length,
  ]);
  const cells: string[] = [];
  let from = 0;
  for (let i = 0; i < row.length; i++) {
    if (row[i] === "\\") i++;
    else if (row[i] === "|" && !code.some(([a, b]) => a! <= i && i < b!)) {
      cells.push(row.slice(from, i));
      from = i + 1;
    }
  }
  return [...cells, row.slice(from)];
}
