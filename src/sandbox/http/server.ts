/**
 * The HTTP front: faults, body parsing, routing (405/OPTIONS/HEAD), authentication, rate limits,
 * the success envelope with `ignored_parameters_unsupported`, the request log, and the client
 * name derived from a request.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from "node:http";
import type { SandboxCore } from "../core.ts";
import type { FailOptions, Faults } from "../faults.ts";
import type { SandboxData, UserRecord } from "../state/data.ts";
import { EMOJI_DATA_PATH, emojiData } from "../state/emoji.ts";
import { userByDeliveryEmail } from "../state/users.ts";
import { ApiError, unauthorized } from "./api-error.ts";
import { Params } from "./params.ts";
import { type RateLimiter, rateBucketOf } from "./rate-limit.ts";
import { type AuthedContext, type Method, matchRoute, RawReply, type Route } from "./router.ts";

export interface RequestLogEntry {
  method: string;
  /** Path below `/api/v1`, e.g. "/messages/12". */
  path: string;
  /** HTTP status; -1 for a reset connection, 0 for a poll hung on purpose. */
  status: number;
  /** The authenticated account, when there was one. */
  email?: string;
}

/** What the response hook sees: enough to check a body against the API description. */
export interface ResponseRecord {
  method: string;
  /** The route pattern, e.g. "/messages/{message_id}". */
  route: string | null;
  status: number;
  body: unknown;
}

export interface ServerDeps {
  core: SandboxCore;
  routes: Route[];
  faults: Faults;
  limiter: RateLimiter;
  log: RequestLogEntry[];
  onResponse?: ((record: ResponseRecord) => void) | undefined;
  /** Called before a request is answered, with its method and status (the data file written first). */
  beforeAnswer?: ((method: string, status: number) => void) | undefined;
  /** The chat page's routes (`/chat…`), when it is served. */
  chat?: ((url: URL, res: ServerResponse) => boolean) | undefined;
}

const METHODS: Method[] = ["GET", "POST", "PATCH", "PUT", "DELETE"];

/**
 * The statuses the real server's proxy (nginx) answers itself, around a restart or an overload:
 * its own HTML page, not a JSON error. An injected fault of one of them without a `body` is so.
 */
const PROXY_STATUSES = new Set([502, 503, 504]);

/**
 * An injected fault's default JSON body, as the server answers the status: a 500 and a 405 carry no
 * `code`; other errors the default `BAD_REQUEST` (a JsonableError's).
 */
function faultBody(status: number): unknown {
  if (status === 500) return { result: "error", msg: "Internal server error" };
  if (status === 405) return { result: "error", msg: "Method Not Allowed" };
  return { result: "error", msg: "Injected failure", code: "BAD_REQUEST" };
}
const MAX_BODY = 25 * 1024 * 1024;

export function createSandboxServer(deps: ServerDeps): Server {
  const server = createServer((req, res) => {
    handle(deps, req, res).catch((err) => {
      // The caller went away mid-request (it aborted, or the sandbox stopped and closed its
      // connection): there is no one to answer and nothing went wrong here.
      if (clientGone(req, err)) return;
      process.stderr.write(`sandbox: internal error: ${(err as Error).stack ?? String(err)}\n`);
      sendJson(res, 500, { result: "error", msg: "Internal server error" });
    });
  });
  server.keepAliveTimeout = 5_000;
  return server;
}

/** Whether `err` is the request's own abort: its connection closed before its body was read. */
function clientGone(req: IncomingMessage, err: unknown): boolean {
  return req.destroyed && (err as NodeJS.ErrnoException | undefined)?.code === "ECONNRESET";
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new ApiError(413, "BAD_REQUEST", "Request body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

async function parseBody(req: IncomingMessage, body: Buffer): Promise<Map<string, string>> {
  const type = (req.headers["content-type"] ?? "").toLowerCase();
  const out = new Map<string, string>();
  if (body.length === 0) return out;
  if (type.startsWith("multipart/form-data")) {
    const form = await new Response(body, { headers: { "content-type": type } }).formData();
    for (const [k, v] of form) if (typeof v === "string" && !out.has(k)) out.set(k, v);
  } else if (type === "" || type.startsWith("application/x-www-form-urlencoded")) {
    for (const [k, v] of new URLSearchParams(body.toString("utf8"))) if (!out.has(k)) out.set(k, v);
  }
  return out;
}

async function handle(deps: ServerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://sandbox");
  if (deps.chat && req.method === "GET" && url.pathname.startsWith("/chat") && deps.chat(url, res)) return;
  const apiPath = url.pathname.startsWith("/api/v1/") ? url.pathname.slice("/api/v1".length) : url.pathname;
  const entry: RequestLogEntry = { method: req.method ?? "GET", path: apiPath, status: 0 };
  let routePattern: string | null = null;
  let effectiveMethod = entry.method;
  const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    entry.status = status;
    deps.log.push(entry);
    deps.onResponse?.({ method: effectiveMethod, route: routePattern, status, body });
    deps.beforeAnswer?.(effectiveMethod, status);
    sendJson(res, status, body, headers);
    deps.core.changed();
  };
  const fail = (err: ApiError, headers: Record<string, string> = {}) =>
    reply(err.status, err.body(), { ...headers, ...err.headers });

  if (deps.faults.takeReset()) {
    entry.status = -1;
    deps.log.push(entry);
    req.socket.destroy();
    return;
  }
  const delay = deps.faults.delayFor(apiPath, entry.method);
  if (delay > 0) await deps.faults.hold(delay);
  const injected = deps.faults.takeFailure(apiPath, entry.method);
  const sendInjected = (fault: FailOptions) => {
    entry.status = fault.reset ? -1 : fault.status;
    deps.log.push(entry);
    if (fault.reset) req.socket.destroy();
    else if (fault.nonJson || (fault.body === undefined && PROXY_STATUSES.has(fault.status))) {
      res.writeHead(fault.status, { "Content-Type": "text/html" });
      res.end(
        `<html><body><h1>${fault.status} ${STATUS_CODES[fault.status] ?? "Error"}</h1></body></html>\n`,
      );
    } else sendJson(res, fault.status, fault.body ?? faultBody(fault.status));
  };
  if (injected && !injected.after) return sendInjected(injected);
  // The emoji data is a static file, outside the API: no credentials, no rate limit.
  if (entry.method === "GET" && url.pathname === EMOJI_DATA_PATH) return reply(200, emojiData());
  const injectedLimit = deps.faults.takeRateLimit();
  if (injectedLimit !== undefined) {
    return fail(
      deps.limiter.injectedRefusal(
        knownCaller(deps.core.data, req.headers.authorization),
        deps.core.clock.now(),
        injectedLimit,
      ),
    );
  }

  let limitHeaders: Record<string, string> = {};
  try {
    const bodyParams = await parseBody(req, await readBody(req));
    const query = new Map<string, string>();
    for (const [k, v] of url.searchParams) if (!query.has(k)) query.set(k, v);
    const params = new Params(bodyParams, query);

    let method = (req.method ?? "GET").toUpperCase();
    if (method === "POST" && bodyParams.has("method")) {
      method = bodyParams.get("method")!.toUpperCase();
      params.consume("method");
    }
    if (method === "HEAD") method = "GET";
    effectiveMethod = method;
    const match = url.pathname.startsWith("/api/v1/") ? matchRoute(deps.routes, apiPath) : undefined;
    if (!match) return reply(404, { result: "error", msg: "Not Found", code: "BAD_REQUEST" });
    routePattern = `/${match.route.segments.join("/").replaceAll(":int}", "}")}`;
    const allowed = METHODS.filter((m) => match.route.methods[m]);
    if (method === "OPTIONS") {
      entry.status = 204;
      deps.log.push(entry);
      res.writeHead(204, { Allow: allowed.join(", ") });
      res.end();
      return;
    }
    const ep = match.route.methods[method as Method];
    if (!ep) {
      return reply(
        405,
        { result: "error", msg: "Method Not Allowed", allowed_methods: allowed },
        { Allow: allowed.join(", ") },
      );
    }

    let user: UserRecord | undefined;
    if (ep.auth) {
      user = authenticate(deps.core.data, req.headers.authorization);
      entry.email = user.delivery_email;
      if (user.bot_type === 2 && !ep.incomingWebhookBots) {
        throw unauthorized("This API is not available to incoming webhook bots.");
      }
      const bucket = rateBucketOf(method, apiPath);
      limitHeaders = deps.limiter.hit(user.user_id, bucket, deps.core.clock.now());
      // Checked before any parameter is read, as the server's decorator wraps the view.
      if (ep.humanUsersOnly && user.bot_type !== null) {
        throw new ApiError(400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
      }
    }

    const closers: (() => void)[] = [];
    res.on("close", () => {
      if (!res.writableEnded) for (const c of closers) c();
    });
    const ctx = {
      core: deps.core,
      params,
      path: match.path,
      clientName: clientNameFrom(req.headers["user-agent"], params.str("client")),
      req,
      onClose: (listener: () => void) => closers.push(listener),
      user: user as UserRecord,
    } satisfies AuthedContext;
    const result = await ep.handler(ctx);
    const holdAnswer = deps.faults.delayFor(apiPath, entry.method, true);
    if (holdAnswer > 0) {
      deps.core.changed(); // what the request changed is kept and told before its answer is held
      await deps.faults.hold(holdAnswer);
    }
    if (injected?.after) {
      deps.core.changed();
      return sendInjected(injected);
    }
    if (result instanceof RawReply) return reply(result.status, result.body, limitHeaders);
    // `result` and `msg` first, then the data, as the server's json_response.
    const body: Record<string, unknown> = { result: "success", msg: "", ...result };
    const ignored = params.ignored();
    if (ep.typed && ignored.length > 0) body.ignored_parameters_unsupported = ignored;
    reply(200, body, limitHeaders);
  } catch (err) {
    if (err instanceof ApiError) return fail(err, limitHeaders);
    throw err;
  }
}

/** Write a JSON body the way the server does: compact, with a trailing newline. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed || res.writableEnded) return;
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    ...headers,
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** Digests, so that keys compare in constant time whatever their lengths. */
const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * HTTP Basic auth (see docs/internals/server-behaviour.md#requests-and-authentication): every key
 * problem is a 401 with the server's specific `msg`.
 */
export function authenticate(data: SandboxData, header: string | undefined): UserRecord {
  if (header === undefined) throw unauthorized();
  // As the server: the header must split into exactly a type and a credential (else 401) before
  // the type is looked at (a type other than Basic is then 400).
  const tokens = header.split(/\s+/).filter((t) => t !== "");
  if (tokens.length !== 2) throw unauthorized("Invalid authorization header for basic auth");
  const [type, encoded] = tokens as [string, string];
  if (type.toLowerCase() !== "basic") {
    throw new ApiError(400, "BAD_REQUEST", "This endpoint requires HTTP basic authentication.");
  }
  const decoded = /^[A-Za-z0-9+/]*={0,2}$/.test(encoded)
    ? Buffer.from(encoded, "base64").toString("utf8")
    : "";
  const parts = decoded.split(":");
  if (parts.length !== 2) throw unauthorized("Invalid authorization header for basic auth");
  const email = parts[0]!.trim();
  const key = parts[1]!.trim();
  if (!/^[A-Za-z0-9]{32}$/.test(key)) throw unauthorized("Malformed API key");
  const user = userByDeliveryEmail(data, email);
  if (!user || user.system_bot || !timingSafeEqual(digest(user.api_key), digest(key)))
    throw unauthorized("Invalid API key");
  if (!user.is_active) throw unauthorized("Account is deactivated");
  return user;
}

/** The account whose credentials `header` carries, if they are valid (else undefined, no error). */
function knownCaller(data: SandboxData, header: string | undefined): number | undefined {
  try {
    return authenticate(data, header).user_id;
  } catch {
    return undefined;
  }
}

/**
 * The client name the server derives from a request (see
 * docs/internals/server-behaviour.md#client-names): the `client` parameter wins, else the
 * User-Agent's product name, else "Unspecified"; at most 30 characters.
 */
const UA = /^([^/ ]*[^0-9/(]*)(\/([^/ ]*))?([ /].*)?$/;

export function clientNameFrom(userAgent: string | undefined, clientParam: string | undefined): string {
  if (clientParam !== undefined && clientParam !== "") return clientParam.slice(0, 30);
  if (userAgent === undefined || userAgent === "") return "Unspecified";
  const m = UA.exec(userAgent);
  const name = m?.[1]?.trim();
  if (!name) return "Unparsable";
  return name.slice(0, 30);
}

const UI_CLIENTS = new Set([
  "zulipandroid",
  "zulipios",
  "zulipdesktop",
  "zulipmobile",
  "zulipelectron",
  "zulipterminal",
  "snipe",
  "website",
  "ios",
  "android",
]);

/** Client.default_read_by_sender(): only UI clients get their own sends marked read. */
export function defaultReadBySender(clientName: string): boolean {
  return UI_CLIENTS.has(clientName.toLowerCase());
}
