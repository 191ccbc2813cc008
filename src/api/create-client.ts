/** `createClient`: one authenticated client per bot account, with typed methods per resource. */
import { readFileSync } from "node:fs";
import type { Dispatcher } from "undici";
import { realClock } from "../time/clock.ts";
import { capturing } from "./capture.ts";
import { type ClientOptions, checkOptionNames } from "./client-options.ts";
import { ClientConfigError } from "./errors.ts";
import { lazyChild, silentLogger } from "./logger.ts";
import { DEFAULT_BUDGET, RateBudget } from "./rate-budget.ts";
import { channelFoldersApi, channelsApi } from "./resources/channels.ts";
import { eventsApi } from "./resources/events.ts";
import { messagesApi, reactionsApi, scheduledMessagesApi } from "./resources/messages.ts";
import { realmApi, serverApi } from "./resources/realm.ts";
import { savedSnippetsApi } from "./resources/saved-snippets.ts";
import { typingApi } from "./resources/typing.ts";
import { pushTokensApi, userGroupsApi, usersApi } from "./resources/users.ts";
import { createTransport, type RequestFn, type ResourceContext } from "./transport.ts";
import { buildConnector, Connection, ConnectionPool, type Connector } from "./undici-core.ts";
import { defaultUserAgent } from "./version.ts";
import { readZuliprc } from "./zuliprc.ts";

export type { ClientCommonOptions, ClientOptions } from "./client-options.ts";

const resourceGroups = {
  events: eventsApi,
  messages: messagesApi,
  scheduledMessages: scheduledMessagesApi,
  typing: typingApi,
  users: usersApi,
  realm: realmApi,
  channelFolders: channelFoldersApi,
  channels: channelsApi,
  userGroups: userGroupsApi,
  savedSnippets: savedSnippetsApi,
  pushTokens: pushTokensApi,
  reactions: reactionsApi,
  server: serverApi,
};

type Resources = { [K in keyof typeof resourceGroups]: ReturnType<(typeof resourceGroups)[K]> };

// Each resource group (a few dozen closures) is made on a client's first use of it, from the
// getters of this prototype, and kept as the client's own property: a daemon holds a client per
// bot, and most bots use a few groups.
const resourceContexts = new WeakMap<object, ResourceContext>();
const lazyResources: object = {};
for (const [name, make] of Object.entries(resourceGroups)) {
  Object.defineProperty(lazyResources, name, {
    enumerable: true,
    get(this: object) {
      const group = make(resourceContexts.get(this)!);
      Object.defineProperty(this, name, {
        value: group,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      return group;
    },
  });
}

/** An object of `fields` whose typed methods (made on first use) call through `ctx` (client-lane.ts). */
export function withResources(fields: object, ctx: ResourceContext): Client {
  const made = Object.defineProperties(
    Object.create(lazyResources),
    Object.getOwnPropertyDescriptors(fields),
  );
  resourceContexts.set(made, ctx);
  return made as Client;
}

/** What `client`'s typed methods call through, for a view of it (client-lane.ts). */
export const resourceContextOf = (client: Client): ResourceContext | undefined =>
  resourceContexts.get(client);

/** An authenticated client. Create one per bot account; connections are pooled per server. */
export interface Client extends Readonly<Resources> {
  /** The server's origin, e.g. "https://chat.example.org". */
  readonly origin: string;
  /** The account's email (the API key is never exposed). */
  readonly email: string;
  /** The server's feature level; `undefined` until learned (requests then use the modern form). */
  featureLevel: number | undefined;
  /** Whether the account is a bot; `undefined` until learned. */
  isBot: boolean | undefined;
  /** The escape hatch: any endpoint, e.g. `client.request("GET", "/users/me/alert_words")`. */
  readonly request: RequestFn;
  /** The account's call budgets (event queue and the rest): limits, calls made, calls left. */
  readonly budget: RateBudget;
}

/**
 * Create a client for one account.
 *
 * @example
 * ```ts
 * const client = createClient({ url: "https://chat.example.org", email: "echo-bot@chat.example.org", apiKey });
 * // or: createClient({ zuliprc: "./echo-bot.zuliprc", logger: pino() })
 * const { id } = await client.messages.send({ type: "channel", to: 5, topic: "hello", content: "Hi!" });
 * ```
 */
export function createClient(options: ClientOptions): Client {
  checkOptionNames(options);
  const { site, email, apiKey, tls, where } = resolveCredentials(options);
  const { origin, apiBase } = parseServerAddress(site, where);
  const clock = options.clock ?? realClock;
  const timeoutMs = positive(options.timeoutMs, "timeoutMs") ?? 30_000;
  const limits = options.rateLimit === false ? undefined : options.rateLimit;
  const budget =
    options.budget ??
    new RateBudget(
      {
        perMinute: positive(limits?.perMinute, "rateLimit.perMinute") ?? DEFAULT_BUDGET.perMinute,
        perHour: positive(limits?.perHour, "rateLimit.perHour") ?? DEFAULT_BUDGET.perHour,
      },
      clock,
      options.rateLimit !== false,
    );
  const logger = options.logger ? lazyChild(options.logger, { component: "api", email }) : silentLogger;
  const transport = createTransport({
    origin,
    apiBase,
    dispatcher: options.dispatcher ?? sharedPool(origin, tls),
    pollDispatcher: options.dispatcher ? undefined : ownConnection(origin, tls),
    email,
    apiKey,
    userAgent: options.userAgent ?? defaultUserAgent,
    logger,
    budget,
    retry: options.retry,
    clock,
    timeoutMs,
    onResponse: options.onResponse,
    onRateLimitWait: options.onRateLimitWait,
  });
  const send = options.capture ? capturing(transport, options.capture) : transport;
  // The escape hatch's path is relative to /api/v1: "users/me" is "/users/me", not "/api/v1users/me".
  const request = ((method, path, ...rest) =>
    send(method, path.startsWith("/") ? path : `/${path}`, ...rest)) as RequestFn;
  // The client is the ServerState its resources read and update (featureLevel, isBot).
  const client = Object.assign(Object.create(lazyResources) as Resources, {
    origin,
    email,
    featureLevel: options.featureLevel,
    isBot: options.isBot,
    request,
    budget,
  });
  const ctx: ResourceContext = {
    state: client,
    logger,
    async call(method, path, params, options, schema) {
      const data = await request(method, path, { ...params }, { ...options, schema });
      return (schema ? data : undefined) as never;
    },
  };
  resourceContexts.set(client, ctx);
  return client;
}

function resolveCredentials(options: ClientOptions): {
  site: string;
  email: string;
  apiKey: string;
  tls: TlsOptions;
  where: string;
} {
  if (options.zuliprc !== undefined) {
    const rc = readZuliprc(options.zuliprc);
    const tls: TlsOptions = {};
    if (rc.insecure) tls.rejectUnauthorized = false;
    if (rc.certBundle) {
      try {
        tls.ca = readFileSync(rc.certBundle, "utf8");
      } catch (err) {
        const message = `Cannot read cert_bundle ${rc.certBundle} named in ${options.zuliprc}.`;
        throw new ClientConfigError(message, { cause: err });
      }
    }
    return {
      site: rc.site,
      email: rc.email,
      apiKey: rc.apiKey,
      tls,
      where: `\`site\` in ${options.zuliprc}`,
    };
  }
  for (const name of ["url", "email", "apiKey"] as const) {
    const value = options[name];
    if (typeof value !== "string" || value.trim() === "") {
      throw new ClientConfigError(
        `createClient: option \`${name}\` is missing or empty. Pass \`url\`, \`email\` and \`apiKey\`, ` +
          `or \`zuliprc\` with the path of the bot's zuliprc file.`,
      );
    }
  }
  return {
    site: options.url,
    email: options.email.trim(),
    apiKey: options.apiKey.trim(),
    tls: {},
    where: "createClient option `url`",
  };
}

function positive(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value <= 0) {
    throw new ClientConfigError(`createClient: option \`${name}\` must be a positive number, got ${value}.`);
  }
  return value;
}

/** TLS settings from a zuliprc (`insecure`, `cert_bundle`). */
interface TlsOptions {
  /** Skip certificate verification (zuliprc `insecure = true`). Only for test servers. */
  rejectUnauthorized?: boolean;
  /** Extra CA certificates in PEM (zuliprc `cert_bundle`). */
  ca?: string;
}

/** One undici Pool per server origin and TLS setting, shared by every client in the process. */
const pools = new Map<string, InstanceType<typeof ConnectionPool>>();

/** The shared pool for `origin` with these TLS settings, created on first use. */
export function sharedPool(origin: string, tls: TlsOptions = {}): Dispatcher {
  const key = `${origin} ${tlsKey(tls)}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new ConnectionPool(origin, { connect: connectorFor(tls) });
    pools.set(key, pool);
  }
  return pool;
}

/**
 * One connector per TLS setting, shared by the pools and every client's own connection: each
 * connector keeps a TLS session cache, which a thousand bots need not hold a thousand times.
 */
const connectors = new Map<string, Connector>();

function connectorFor(tls: TlsOptions): Connector {
  const key = tlsKey(tls);
  let connector = connectors.get(key);
  if (!connector) {
    connector = buildConnector(connectOptions(tls));
    connectors.set(key, connector);
  }
  return connector;
}

const tlsKey = (tls: TlsOptions): string =>
  `${tls.rejectUnauthorized === false ? "insecure" : "verify"} ${tls.ca ?? ""}`;

/**
 * One connection of a client's own, made on first use, for its event queue's long polls: a poll
 * is parked for up to a minute, so a daemon with a pool shared by N bots would hold N busy
 * connections there, and every call would search past them for a free one. Once the client is
 * dropped, the connection closes when it has been idle for the keep-alive timeout.
 */
function ownConnection(origin: string, tls: TlsOptions): () => Dispatcher {
  let connection: Dispatcher | undefined;
  return () => {
    connection ??= new Connection(origin, { connect: connectorFor(tls) });
    return connection;
  };
}

function connectOptions(tls: TlsOptions): { rejectUnauthorized?: boolean; ca?: string } {
  return {
    ...(tls.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
    ...(tls.ca ? { ca: tls.ca } : {}),
  };
}

/** Close every shared pool, waiting for requests in flight. Call once at process shutdown. */
export async function closeConnectionPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((pool) => pool.close()));
}

/**
 * The origin to connect to and the API base path of a server address as people write it
 * ("chat.example.org", "https://chat.example.org/", a zuliprc `site` ending in "/api"). `where`
 * names its source in the error, e.g. "createClient option `url`". Errors never quote the whole
 * value: an address may carry a password or a token.
 */
export function parseServerAddress(site: string, where: string): { origin: string; apiBase: string } {
  const trimmed = site.trim();
  // A scheme is letters then ":", unless what follows is a port ("localhost:9991", "host:8443/x").
  const scheme = /^([a-z][a-z0-9+.-]*):(?!\d+(?:[/?#]|$))/i.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme !== undefined && scheme !== "http" && scheme !== "https") {
    throw new ClientConfigError(`${where} must start with http:// or https://, not ${scheme}:.`);
  }
  // Like the Python client: no scheme means https, except for localhost development servers.
  const withScheme =
    scheme !== undefined
      ? trimmed
      : `${/^(localhost|127\.0\.0\.1)(:|\/|$)/.test(trimmed) ? "http" : "https"}://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ClientConfigError(
      `${where} is not a valid server URL: write the organization's address, a host with an optional ` +
        `port (up to 65535) and path, like "https://chat.example.org".`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new ClientConfigError(
      `${where} must not carry a user name or password (before "@"): the bot signs in with its email ` +
        "and API key.",
    );
  }
  if (url.search !== "" || url.hash !== "") {
    throw new ClientConfigError(
      `${where} must not have a query ("?…") or a fragment ("#…"): write only the server's address, ` +
        "its scheme, host, port and path.",
    );
  }
  const host = url.hostname;
  if (scheme === undefined && !host.includes(".") && host !== "localhost" && !host.startsWith("[")) {
    throw new ClientConfigError(
      `${where} "${host}" has no scheme and is not a domain name: write the whole address, like ` +
        `"https://chat.example.org", or "http://${host}" for a server of that name on the local network.`,
    );
  }
  const prefix = url.pathname.replace(/\/+$/, "").replace(/\/api(\/v1)?$/, "");
  return { origin: url.origin, apiBase: `${prefix}/api/v1` };
}
