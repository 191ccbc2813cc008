/**
 * The paths of outgoing-webhook bots (`bots.<name>.outgoing_webhook.path`) share the HTTP listener
 * with bothost's own routes: a path that is one of those, or another bot's, is refused where the
 * config sets it, as `bothost check` and a reload read it, and again when the listener starts
 * (a `Daemon` made in code has no file to locate).
 */
import type { z } from "zod";

/** bothost's own routes on the listener: exact paths, and prefixes ending in `/`. */
const RESERVED = ["/healthz", "/readyz", "/metrics", "/status", "/webhooks/", "/admin/"];

/** The route of bothost's own that `path` would take, if any. */
export function reservedRoute(path: string): string | undefined {
  return RESERVED.find((r) => path === r || (r.endsWith("/") && path.startsWith(r)));
}

/** Why a bot's outgoing path cannot be used: reserved, or `other`'s too. */
export function outgoingPathProblem(
  path: string,
  bot: string,
  other: string | undefined,
): string | undefined {
  const clash = reservedRoute(path);
  if (clash) return `is reserved (${clash}); choose another, like "/hooks/${bot}".`;
  if (other) return `is also the path of bot ${other}; give each bot its own.`;
  return undefined;
}

/** Each bot's outgoing path that is reserved or another bot's, refused at that bot's `path`. */
export function checkOutgoingPaths(
  config: { bots: Record<string, { outgoing_webhook?: { path: string } | undefined }> },
  ctx: { addIssue(issue: z.core.$ZodRawIssue): void },
): void {
  const seen = new Map<string, string>();
  for (const [name, bot] of Object.entries(config.bots)) {
    const path = bot.outgoing_webhook?.path;
    if (path === undefined) continue;
    const problem = outgoingPathProblem(path, name, seen.get(path));
    if (problem)
      ctx.addIssue({
        code: "custom",
        path: ["bots", name, "outgoing_webhook", "path"],
        input: path,
        message: problem.replace(/\.$/, ""),
      });
    if (!seen.has(path)) seen.set(path, name);
  }
}
