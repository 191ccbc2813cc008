/**
 * The admin routes (`/admin/…` and the `/status` page) show and change what the daemon does. They
 * are served twice from one table: on the daemon's admin socket (admin-socket.ts, guarded by the
 * file's permissions) and on the HTTP listener, where with `http.admin_token` every request
 * carries it (Bearer, or the Basic password a browser asks for), compared in constant time;
 * without a token they exist there only when the listener is on a loopback address.
 */
import type { FastifyInstance } from "fastify";
import { isConfigError } from "../config/config-error.ts";
import { type BothostError, isBothostError } from "../errors/bothost-error.ts";
import type { DeadLetterOffice, DeadLetterSelection } from "../state/dead-letter-office.ts";
import { isStateError } from "../state/state-error.ts";
import { safeEqual } from "../webhook/constant-time.ts";
import type { BotDialogs, DaemonStatus } from "./daemon-status.ts";
import { renderStatusPage } from "./status-page.ts";

/** What the admin routes act on. */
export interface AdminHandlers {
  /** The dead letters in force (a reload replaces them). */
  letters: () => DeadLetterOffice;
  status: () => Promise<DaemonStatus>;
  /** Reload the config from its file; rejects with the located config errors. */
  reload: () => Promise<unknown>;
  /** The open dialogs of bot `name`, or of every bot; rejects an unknown bot (`UNKNOWN_BOT`). */
  dialogs: (name?: string) => Promise<BotDialogs[]>;
  /**
   * End dialog `id` of bot `name`, its person told `note` (else a default note); rejects with
   * `UNKNOWN_BOT`, `UNKNOWN_DIALOG`, `BOT_NOT_HERE` (another instance runs the bot),
   * `BOT_NOT_STARTED` (the bot has not read its dialogs here yet: starting, or failed) or
   * `DIALOG_STARTING` (its first question not recorded within 5 s: nothing was ended) or
   * `DIALOG_END_PENDING` (the end not landed within 3 s: it is tried until the store takes it).
   */
  /**
   * `underWay`: a run of the dialog was under way; the person is told once it is over.
   * `nextStart`: the bot is stopped here; its next start tells the person.
   */
  endDialog: (name: string, id: string, note?: string) => Promise<{ underWay?: true; nextStart?: true }>;
}

export interface AdminDeps extends AdminHandlers {
  /** The listener's host, as configured. */
  host: string;
  token: string | undefined;
}

/** One admin request, whatever server received it. */
export interface AdminRequest {
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  body: unknown;
}

/** The answer: a JSON body, or an HTML page. */
export interface AdminAnswer {
  status: number;
  body: unknown;
  html?: true;
}

export interface AdminRoute {
  method: "GET" | "POST";
  /** A path with `:name` segments, as fastify writes them. */
  path: string;
  handle(request: AdminRequest): Promise<AdminAnswer>;
}

/** The admin routes, served by the HTTP listener and by the admin socket alike. */
export function adminRoutes(deps: AdminHandlers): AdminRoute[] {
  const ok = (body: unknown): AdminAnswer => ({ status: 200, body });
  const letters = () => deps.letters();
  return [
    { method: "GET", path: "/admin/status", handle: async () => ok(await deps.status()) },
    {
      method: "GET",
      path: "/status",
      handle: async () => ({ status: 200, body: renderStatusPage(await deps.status()), html: true }),
    },
    {
      method: "POST",
      path: "/admin/reload",
      handle: async () => {
        try {
          return ok(await deps.reload());
        } catch (err) {
          // A config or module the daemon refused: the located problems, for `bothost reload` to print.
          if (isConfigError(err)) return { status: 400, body: { error: err.format() } };
          if (isBothostError(err)) return { status: 400, body: { error: `${err.message} [${err.code}]` } };
          throw err;
        }
      },
    },
    {
      method: "GET",
      path: "/admin/failed",
      handle: (r) => answer(() => letters().list(nonEmpty(r.query.bot))),
    },
    {
      method: "GET",
      path: "/admin/failed/:bot/:n",
      handle: async ({ params: { bot, n } }) => {
        const letter = await answer(() => letters().get(`${bot}/${n}`));
        if (letter.status !== 200 || letter.body) return letter;
        return { status: 404, body: { error: `no dead letter ${bot}/${n}` } };
      },
    },
    {
      method: "POST",
      path: "/admin/failed/retry",
      handle: (r) => answer(() => letters().retry(selection(r.body))),
    },
    {
      method: "POST",
      path: "/admin/failed/drop",
      handle: (r) => answer(() => letters().drop(selection(r.body))),
    },
    {
      method: "GET",
      path: "/admin/dialogs",
      handle: (r) => answer(async () => deps.dialogs(nonEmpty(r.query.bot))),
    },
    {
      method: "POST",
      path: "/admin/dialogs/:bot/:id/end",
      handle: ({ params: { bot, id }, body }) =>
        answer(async () => {
          const made = await deps.endDialog(bot!, id!, note(body));
          return { ended: true, bot, id, ...made };
        }),
    },
  ];
}

/** True for an address only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Registers the admin routes on the listener, or nothing when they would be open on a public interface. */
export function registerAdminRoutes(app: FastifyInstance, deps: AdminDeps): boolean {
  if (deps.token === undefined && !isLoopback(deps.host)) return false;
  const token = deps.token;
  app.register(async (admin) => {
    if (token !== undefined) {
      admin.addHook("onRequest", async (request, reply) => {
        if (safeEqual(givenToken(request.headers.authorization ?? ""), token)) return;
        return reply.code(401).header("www-authenticate", 'Basic realm="bothost", charset="UTF-8"').send({
          error:
            "the request's http.admin_token is missing or not the daemon's: send Authorization: Bearer <the daemon's http.admin_token>",
        });
      });
    }
    for (const route of adminRoutes(deps)) {
      admin.route({
        method: route.method,
        url: route.path,
        handler: async (request, reply) => {
          const a = await route.handle({
            params: (request.params ?? {}) as Record<string, string>,
            query: (request.query ?? {}) as Record<string, string | undefined>,
            body: request.body,
          });
          if (a.html) reply.type("text/html; charset=utf-8").header("cache-control", "no-store");
          return reply.code(a.status).send(a.body);
        },
      });
    }
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

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

class BadRequest extends Error {}

function selection(body: unknown): DeadLetterSelection {
  const b = (body ?? {}) as { ids?: unknown; all?: unknown; bot?: unknown };
  if (Array.isArray(b.ids) && b.ids.every((id) => typeof id === "string")) return { ids: b.ids };
  if (b.all === true) return typeof b.bot === "string" ? { all: true, bot: b.bot } : { all: true };
  throw new BadRequest('the body must be {"ids": ["bot/1", …]} or {"all": true, "bot"?: "name"}');
}

/** `{"note"?: "…"}`: what the person of an ended dialog is told (absent: the default note). */
function note(body: unknown): string | undefined {
  const given = (body ?? {}) as { note?: unknown };
  if (given.note === undefined) return undefined;
  if (typeof given.note === "string" && given.note.trim() !== "" && given.note.length <= MAX_NOTE) {
    return given.note;
  }
  throw new BadRequest(`the note must be a text of 1 to ${MAX_NOTE} characters`);
}

/** The longest note an operator may send (a message's length on the server). */
const MAX_NOTE = 10_000;

/** The HTTP status of an error the caller caused, by its code. */
const REFUSED: Record<string, number> = {
  UNKNOWN_BOT: 400,
  UNKNOWN_DIALOG: 404,
  BOT_NOT_HERE: 409,
  BOT_NOT_STARTED: 409,
  DIALOG_STARTING: 409,
  // Not refused, not done: the end is tried until the store takes it (a gateway's timeout).
  DIALOG_END_PENDING: 504,
};

async function answer(act: () => Promise<unknown>): Promise<AdminAnswer> {
  try {
    return { status: 200, body: await act() };
  } catch (err) {
    if (err instanceof BadRequest) return { status: 400, body: { error: err.message } };
    // A refusal the caller caused, with its code (`bothost dialogs end` exits by it).
    const status = isBothostError(err) ? REFUSED[err.code] : undefined;
    if (status !== undefined) {
      const { message, code } = err as BothostError;
      return { status, body: { error: message, code } };
    }
    // The state store failed the request (Redis not answering, the disk): its own message names
    // the store and what to check, where a bare 500 would say only "internal error".
    if (isStateError(err)) return { status: 503, body: { error: err.message, code: err.code } };
    throw err;
  }
}
