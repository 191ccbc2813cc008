/**
 * Routes: a path pattern and a handler per method. Patterns use `{name}` for any segment and
 * `{name:int}` for digits only (a non-integer there means no route, like the server's URLconf).
 */
import type { IncomingMessage } from "node:http";
import type { SandboxCore } from "../core.ts";
import type { UserRecord } from "../state/data.ts";
import type { Params } from "./params.ts";

export type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

export interface RequestContext {
  core: SandboxCore;
  params: Params;
  path: Record<string, string>;
  /**
   * The client name from the `client` parameter or the User-Agent (see
   * docs/internals/server-behaviour.md#client-names).
   */
  clientName: string;
  req: IncomingMessage;
  /** Called with a function to run if the client disconnects before the reply. */
  onClose(listener: () => void): void;
}

export interface AuthedContext extends RequestContext {
  user: UserRecord;
}

/** A finished reply that bypasses the success envelope and `ignored_parameters_unsupported`. */
export class RawReply {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {}
}

export type HandlerResult = Record<string, unknown> | RawReply | undefined;

export interface Endpoint {
  handler: (ctx: AuthedContext) => HandlerResult | Promise<HandlerResult>;
  /** false: no authentication (GET /server_settings). */
  auth: boolean;
  /** false: the view does not report ignored parameters (not a typed endpoint on the server). */
  typed: boolean;
  /** Incoming-webhook bots may call it (only POST /messages). */
  incomingWebhookBots: boolean;
  /** Bots of any type are refused (the server's human_users_only views). */
  humanUsersOnly: boolean;
}

export interface Route {
  segments: string[];
  methods: Partial<Record<Method, Endpoint>>;
}

type EndpointOptions = Partial<Pick<Endpoint, "auth" | "typed" | "incomingWebhookBots" | "humanUsersOnly">>;

/** Define an endpoint: a handler and how the server wraps it. */
export function endpoint(handler: Endpoint["handler"], opts: EndpointOptions = {}): Endpoint {
  return {
    handler,
    auth: opts.auth ?? true,
    typed: opts.typed ?? true,
    incomingWebhookBots: opts.incomingWebhookBots ?? false,
    humanUsersOnly: opts.humanUsersOnly ?? false,
  };
}

export function route(path: string, methods: Partial<Record<Method, Endpoint>>): Route {
  return { segments: path.split("/").filter(Boolean), methods };
}

/** The first route whose pattern matches (list literal paths before patterns). */
export function matchRoute(
  routes: Route[],
  pathname: string,
): { route: Route; path: Record<string, string> } | undefined {
  const parts = pathname.split("/").filter(Boolean);
  for (const r of routes) {
    if (r.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const ok = r.segments.every((seg, i) => {
      const part = parts[i]!;
      const m = /^\{(\w+)(?::int)?\}$/.exec(seg);
      if (!m) return seg === part;
      if (seg.endsWith(":int}") && !/^[0-9]+$/.test(part)) return false;
      params[m[1]!] = part;
      return true;
    });
    if (ok) return { route: r, path: params };
  }
  return undefined;
}
