/** Saved snippets (NOTES §10): list, create, edit (nothing → 200 without event), delete. */
import { badRequest, notFound } from "../http/api-error.ts";
import type { Params } from "../http/params.ts";
import { type AuthedContext, endpoint, route } from "../http/router.ts";
import { emitToUsers } from "../queues/delivery.ts";
import { nextId, type SnippetRecord } from "../state/data.ts";

const MAX_TITLE = 60;
const MAX_CONTENT = 10000;

const view = ({ id, title, content, date_created }: SnippetRecord) => ({ id, title, content, date_created });

function text(params: Params, name: string, max: number, required: boolean): string | undefined {
  const raw = required ? params.requiredStr(name) : params.str(name);
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (value === "") throw badRequest(`${name} cannot be blank`);
  if ([...value].length > max) throw badRequest(`${name} is too long (limit: ${max} characters)`);
  return value;
}

function access(ctx: AuthedContext): SnippetRecord {
  const id = Number(ctx.path.saved_snippet_id);
  const snippet = ctx.core.data.snippets.find((s) => s.id === id && s.user_id === ctx.user.user_id);
  if (!snippet) throw notFound("Saved snippet does not exist.");
  return snippet;
}

export const savedSnippetRoutes = [
  route("/saved_snippets", {
    GET: endpoint(
      ({ core, user }) => ({
        saved_snippets: core.data.snippets.filter((s) => s.user_id === user.user_id).map(view),
      }),
      { typed: false },
    ),
    POST: endpoint(({ core, user, params }) => {
      const title = text(params, "title", MAX_TITLE, true)!;
      const content = text(params, "content", MAX_CONTENT, true)!;
      const snippet = {
        id: nextId(core.data, "snippet"),
        user_id: user.user_id,
        title,
        content,
        date_created: core.nowSeconds(),
      };
      core.data.snippets.push(snippet);
      emitToUsers(core, [user.user_id], { type: "saved_snippets", op: "add", saved_snippet: view(snippet) });
      return { saved_snippet_id: snippet.id };
    }),
  }),
  route("/saved_snippets/{saved_snippet_id:int}", {
    PATCH: endpoint((ctx) => {
      const title = text(ctx.params, "title", MAX_TITLE, false);
      const content = text(ctx.params, "content", MAX_CONTENT, false);
      if (title === undefined && content === undefined) return {};
      const snippet = access(ctx);
      if (title !== undefined) snippet.title = title;
      if (content !== undefined) snippet.content = content;
      emitToUsers(ctx.core, [ctx.user.user_id], {
        type: "saved_snippets",
        op: "update",
        saved_snippet: view(snippet),
      });
      return {};
    }),
    DELETE: endpoint((ctx) => {
      const snippet = access(ctx);
      ctx.core.data.snippets = ctx.core.data.snippets.filter((s) => s !== snippet);
      emitToUsers(ctx.core, [ctx.user.user_id], {
        type: "saved_snippets",
        op: "remove",
        saved_snippet_id: snippet.id,
      });
      return {};
    }),
  }),
];
