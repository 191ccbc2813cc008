/**
 * `/admin/…` and the `/status` page show and change what the daemon does: with `http.admin_token`
 * every request carries it (Bearer, or the Basic password a browser asks for), compared in constant
 * time; without a token they exist only when the listener is on a loopback address.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { isConfigError } from "../config/config-error.ts";
import { isBothostError } from "../errors/bothost-error.ts";
import type { DeadLetterOffice, DeadLetterSelection } from "../state/dead-letter-office.ts";
import { safeEqual } from "../webhook/constant-time.ts";
import type { DaemonStatus } from "./daemon-status.ts";
import { renderStatusPage } from "./status-page.ts";

export interface AdminDeps {
  /** The listener's host, as configured. */
  host: string;
  token: string | undefined;
  /** The dead letters in force (a reload replaces them). */
  letters: () => DeadLetterOffice;
  status: () => Promise<DaemonStatus>;
  /** Reload the config from its file; rejects with the located config errors. */
  reload: () => Promise<unknown>;
}

/** True for an address only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Registers the admin routes, or nothing when they would be open on a public interface. */
export function registerAdminRoutes(app: FastifyInstance, deps: AdminDeps): boolean {
  if (deps.token === undefined && !isLoopback(deps.host)) return false;
  const token = deps.token;
  app.register(async (admin) => {
    if (token !== undefined) {
      admin.addHook("onRequest", async (request, reply) => {
        if (safeEqual(givenToken(request.headers.authorization ?? ""), token)) return;
        return reply
          .code(401)
          .header("www-authenticate", 'Basic realm="bothost", charset="UTF-8"')
          .send({ error: "this route needs the http.admin_token: Authorization: Bearer <token>" });
      });
    }
    const letters = () => deps.letters();
    admin.get("/admin/status", () => deps.status());
    admin.get("/status", async (_request, reply) =>
      reply
        .type("text/html; charset=utf-8")
        .header("cache-control", "no-store")
        .send(renderStatusPage(await deps.status())),
    );
    admin.post("/admin/reload", async (_request, reply) => {
      try {
        return await deps.reload();
      } catch (err) {
        // A config or module the daemon refused: the located problems, for `bothost reload` to print.
        if (isConfigError(err)) return reply.code(400).send({ error: err.format() });
        if (isBothostError(err)) return reply.code(400).send({ error: `${err.message} [${err.code}]` });
        throw err;
      }
    });
    admin.get("/admin/failed", (request, reply) => answer(reply, () => letters().list(query(request).bot)));
    admin.get("/admin/failed/:bot/:n", async (request, reply) => {
      const { bot, n } = request.params as { bot: string; n: string };
      const letter = await letters().get(`${bot}/${n}`);
      return letter ? letter : reply.code(404).send({ error: `no dead letter ${bot}/${n}` });
    });
    admin.post("/admin/failed/retry", (request, reply) =>
      answer(reply, () => letters().retry(selection(request.body))),
    );
    admin.post("/admin/failed/drop", (request, reply) =>
      answer(reply, () => letters().drop(selection(request.body))),
    );
  });
  return true;
}

/** The token of a Bearer header, or the password of a Basic one. */
function givenToken(header: string): string {
  if (header.startsWith("Bearer ")) return header.slice("Bearer ".length);
  if (!header.startsWith("Basic ")) return "";
  const decoded = Buffer.from(header.slice("Basic ".length), "base64").toString("utf8");
  return decoded.slice(decoded.indexOf(":") + 1);
}

function query(request: FastifyRequest): { bot?: string } {
  const bot = (request.query as { bot?: unknown }).bot;
  return typeof bot === "string" && bot !== "" ? { bot } : {};
}

class BadRequest extends Error {}

function selection(body: unknown): DeadLetterSelection {
  const b = (body ?? {}) as { ids?: unknown; all?: unknown; bot?: unknown };
  if (Array.isArray(b.ids) && b.ids.every((id) => typeof id === "string")) return { ids: b.ids };
  if (b.all === true) return typeof b.bot === "string" ? { all: true, bot: b.bot } : { all: true };
  throw new BadRequest('the body must be {"ids": ["bot/1", …]} or {"all": true, "bot"?: "name"}');
}

async function answer(reply: FastifyReply, act: () => Promise<unknown>): Promise<unknown> {
  try {
    return await act();
  } catch (err) {
    if (err instanceof BadRequest || (isBothostError(err) && err.code === "UNKNOWN_BOT")) {
      return reply.code(400).send({ error: err.message });
    }
    throw err;
  }
}
