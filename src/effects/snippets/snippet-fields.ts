/**
 * The server's rules for snippet fields (NOTES §10): both are stripped, must not be blank, and
 * are at most 60 (title) and 10000 (content) Unicode code points. Checking them here turns a
 * 400 into an error that names the snippet.
 */
import { codePointLength } from "../limits/code-points.ts";
import { SnippetError } from "./snippet-error.ts";

export const MAX_SNIPPET_TITLE = 60;
export const MAX_SNIPPET_CONTENT = 10_000;

/**
 * `value` stripped as the server stores it, or a {@link SnippetError} `SNIPPET_INVALID`.
 *
 * @example
 * ```ts
 * snippetField("title", "  Welcome "); // "Welcome"
 * ```
 */
export function snippetField(field: "title" | "content", value: string): string {
  const max = field === "title" ? MAX_SNIPPET_TITLE : MAX_SNIPPET_CONTENT;
  if (typeof value !== "string") {
    throw new SnippetError("SNIPPET_INVALID", `Snippet ${field} must be a string, got ${typeof value}.`);
  }
  const text = value.trim();
  if (text === "") {
    throw new SnippetError(
      "SNIPPET_INVALID",
      `Snippet ${field} is blank; the server refuses blank ${field}s.`,
    );
  }
  const length = codePointLength(text);
  if (length > max) {
    throw new SnippetError(
      "SNIPPET_INVALID",
      `Snippet ${field} is ${length} characters; the server allows at most ${max}. Shorten it.`,
    );
  }
  return text;
}
