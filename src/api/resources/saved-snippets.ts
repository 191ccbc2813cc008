/** Saved snippets (feature level 297; editing 368). */
import { z } from "zod";
import { SavedSnippet } from "../../wire/records.ts";
import { path } from "../encode.ts";
import { requireFeature } from "../feature-level.ts";
import type { CallOptions, ResourceContext } from "../transport.ts";

const Created = z.looseObject({ saved_snippet_id: z.number().int() });
const Listed = z.looseObject({ saved_snippets: z.array(SavedSnippet) });

export function savedSnippetsApi(ctx: ResourceContext) {
  const need = (what: string) => requireFeature(ctx.state, "savedSnippets", what);
  return {
    /** Save a snippet (POST /saved_snippets); title and content must not be blank. */
    async create(params: { title: string; content: string }, options: CallOptions = {}) {
      need("Saving a snippet (POST /saved_snippets)");
      return ctx.call("POST", "/saved_snippets", params, options, Created);
    },

    /** The account's saved snippets (GET /saved_snippets). */
    async list(options: CallOptions = {}) {
      need("Listing saved snippets (GET /saved_snippets)");
      return ctx.call("GET", "/saved_snippets", {}, options, Listed);
    },

    /** Change a snippet's title and/or content (PATCH /saved_snippets/{id}, feature level 368). */
    async update(
      saved_snippet_id: number,
      params: { title?: string; content?: string },
      options: CallOptions = {},
    ): Promise<void> {
      requireFeature(
        ctx.state,
        "savedSnippetsEdit",
        "Editing a saved snippet (PATCH /saved_snippets/{saved_snippet_id})",
      );
      return ctx.call("PATCH", path`/saved_snippets/${saved_snippet_id}`, params, options);
    },

    /** Delete a snippet (DELETE /saved_snippets/{id}). */
    async delete(saved_snippet_id: number, options: CallOptions = {}): Promise<void> {
      need("Deleting a saved snippet (DELETE /saved_snippets/{saved_snippet_id})");
      return ctx.call("DELETE", path`/saved_snippets/${saved_snippet_id}`, {}, options);
    },
  };
}

export type SavedSnippetsApi = ReturnType<typeof savedSnippetsApi>;
