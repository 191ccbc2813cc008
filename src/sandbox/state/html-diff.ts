/**
 * `content_html_diff` for edit history: the new HTML with inserted words wrapped in
 * `highlight_text_inserted` spans and removed words in `highlight_text_deleted` spans
 * (the classes the server uses), computed as a token LCS.
 */

const tokenize = (html: string) => html.match(/<[^>]*>|[^<\s]+|\s+/g) ?? [];
const MAX_TOKENS = 2000;

export function htmlDiff(oldHtml: string, newHtml: string): string {
  const a = tokenize(oldHtml);
  const b = tokenize(newHtml);
  if (a.length * b.length > MAX_TOKENS * MAX_TOKENS) {
    return `<div><span class="highlight_text_inserted">${newHtml}</span></div>`;
  }
  // lcs[i][j]: longest common subsequence of a[i..] and b[j..].
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: string[] = [];
  const isTag = (t: string) => t.startsWith("<");
  const mark = (cls: string, t: string) =>
    isTag(t) || t.trim() === "" ? t : `<span class="${cls}">${t}</span>`;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(b[j]!);
      i++;
      j++;
    } else if (j < b.length && (i >= a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      out.push(mark("highlight_text_inserted", b[j]!));
      j++;
    } else {
      const t = a[i]!;
      if (!isTag(t)) out.push(mark("highlight_text_deleted", t));
      i++;
    }
  }
  return `<div>${out.join("")}</div>`;
}
