import { BothostError } from "../../errors/bothost-error.ts";

export type SnippetErrorCode = "SNIPPET_INVALID" | "SNIPPET_NOT_FOUND";

/**
 * A saved-snippet call that cannot work: a blank or too long title or content (checked before
 * the request, with the server's limits: title 1–60, content 1–10000 characters after trimming),
 * or an update of a title the bot has no snippet for.
 *
 * @example
 * ```ts
 * try { await ctx.snippets.update("Welcome", { content: text }); }
 * catch (err) { if (err instanceof SnippetError && err.code === "SNIPPET_NOT_FOUND") await ctx.snippets.create("Welcome", text); }
 * ```
 */
export class SnippetError extends BothostError<SnippetErrorCode> {
  override readonly name = "SnippetError";
}
