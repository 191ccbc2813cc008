/**
 * The daemon's HTTP listener (`http.listen`): webhooks, health, metrics and admin routes, on fastify
 * for its per-route body limits, per-plugin content-type parsers, request timeouts and graceful close.
 */
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import type { Logger } from "pino";
import { timeoutSignal } from "../api/sleep.ts";
import { outgoingPathProblem } from "../config/outgoing-paths.ts";
import { DEFAULT_IDEMPOTENCY_WINDOW_MS } from "../config/schema.ts";
import { parseListenAddress } from "../config/schema-fields.ts";
import { installAccessLog, loggedClientAbort, pathOf } from "../log/access-log.ts";
import { RouterError } from "../pipeline/router-error.ts";
import type { StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import { WEBHOOK_SENDER_DEADLINE_MS } from "../webhook/budget-room.ts";
import { type InboundBot, registerInboundRoutes } from "../webhook/inbound-routes.ts";
import { type OutgoingBot, registerOutgoingRoutes } from "../webhook/outgoing-routes.ts";
import { parseForm } from "../webhook/parse-body.ts";
import { WebhookRequestCounts } from "../webhook/request-counts.ts";
import type { WebhookRuntime } from "../webhook/webhook-runtime.ts";
import { type AdminDeps, registerAdminRoutes } from "./admin-routes.ts";
import type { BothostMetrics, SchedulerStatsLike } from "./bothost-metrics.ts";
import type { BudgetSource } from "./budget-metrics.ts";
import { installBoundedDrain } from "./drain-unread.ts";
import { HttpConfigError } from "./http-config-error.ts";
import { type ReadinessInput, readinessOf } from "./readiness.ts";

export interface HttpBot {
  runtime: WebhookRuntime & {
    readonly status: ReadinessInput &
      Partial<
        Pick<BudgetSource, "pacing"> & {
          budget: BudgetSource["buckets"];
          dialogsWaiting: number;
          storeWriteFailures: ReadonlyMap<string, number>;
          storeWaits: number;
        }
      >;
  };
  /** The bot's own store (fenced by its lease in a cluster); its idempotency keys go to `<bot>/webhooks`. */
  store: StateStore;
  /** Makes the bot's writes outlive a kill of the process (the state store's commit). */
  commit(): Promise<void>;
  handlerTimeoutMs: number;
  /** The config's `webhooks` entries, by inbound webhook name. */
  webhooks: Readonly<
    Record<string, { readonly idempotency_window: number; readonly sender_timeout?: number }>
  >;
  /** Set for a bot in webhook mode (`outgoing_webhook` in its config). */
  outgoing?: { path: string; token: string; replyDeadlineMs: number };
}

export interface HttpListenerOptions {
  /** `host:port`, e.g. `127.0.0.1:8080` (port 0: any free port). */
  listen: string;
  bodyLimit: number;
  requestTimeoutMs: number;
  log: Logger;
  metrics: BothostMetrics;
  bots: readonly HttpBot[];
  /** The daemon's clock: readiness ages, webhook timestamps, timeouts and deadlines. */
  clock: Clock;
  /** The admin routes (`http.admin_token`; see admin-routes.ts). */
  admin?: Omit<AdminDeps, "host">;
  /** Why a bot failed to start (its setup threw, …), while it has not started since: `/readyz` says so. */
  startFailure?: (bot: string) => string | undefined;
  /** Cluster mode: why this instance lost a bot's lease, until it takes it again: `/readyz` says so. */
  leaseLost?: (bot: string) => string | undefined;
  /** Cluster mode: the instance holding a bot's lease, as the last round read it (not this one). */
  leaseHolder?: (bot: string) => string | undefined;
}

const NONE: ReadonlyMap<string, number> = new Map();

export class HttpListener {
  readonly #o: HttpListenerOptions;
  readonly #app: FastifyInstance;
  /** Aborted once the listener closes: a new request gets 503. */
  readonly #closing = new AbortController();
  /** Aborted once the stop's deadline passed: the webhook handlers still running are cut off. */
  readonly #cut = new AbortController();
  /** Each bot's routes look its runtime up here per request, so a reload can swap it. */
  readonly #inbound = new Map<string, InboundBot>();
  readonly #outgoing = new Map<string, OutgoingBot>();
  /** Every bot's current runtime: `/readyz` and `/metrics` read these, so a reload's new ones count. */
  readonly #bots = new Map<string, HttpBot>();
  /** The base URL, once listening. */
  url: string | undefined;
  /** What each bot's inbound webhooks were sent since the listener started (`bothost status`). */
  readonly webhookRequests = new WebhookRequestCounts();

  constructor(options: HttpListenerOptions) {
    this.#o = options;
    checkPaths(options.bots);
    for (const b of options.bots) this.#bots.set(b.runtime.name, b);
    this.#app = this.#build();
  }

  /** Listen, then set `url` (with the real port when `listen` asked for port 0). */
  async start(): Promise<void> {
    const address = parseListenAddress(this.#o.listen);
    if (!address)
      throw new HttpConfigError("HTTP_CONFIG_INVALID", `http.listen "${this.#o.listen}" is not host:port`);
    try {
      await this.#app.listen({ host: address.host, port: address.port });
    } catch (err) {
      throw new HttpConfigError(
        "HTTP_LISTEN_FAILED",
        `Cannot listen on ${this.#o.listen} (http.listen): ${(err as Error).message}. ` +
          `Choose a free port, or stop the program using it.`,
        { cause: err },
      );
    }
    const info = this.#app.server.address();
    const port = typeof info === "object" && info ? info.port : address.port;
    const host = address.host.includes(":") ? `[${address.host}]` : address.host;
    this.url = `http://${host}:${port}`;
    this.#o.log.info({ url: this.url }, "http listener started");
  }

  /**
   * Stop accepting connections; requests in flight are answered first. A webhook handler still
   * running after `deadlineMs` (the stop's `shutdown_timeout`) has its signal aborted with
   * `ROUTER_ABORTED`, as an event's handler has: its request is answered 503, to be sent again.
   * Resolves with what is left of `deadlineMs`.
   */
  async close(deadlineMs = Number.POSITIVE_INFINITY): Promise<number> {
    const began = this.#o.clock.now();
    this.#closing.abort();
    const cut = () => new RouterError("ROUTER_ABORTED", "the daemon's stop passed its deadline");
    // No time at all (a stop as abrupt as a crash): cut at once, not at a timer's turn.
    if (deadlineMs <= 0) this.#cut.abort(cut());
    const limit =
      Number.isFinite(deadlineMs) && deadlineMs > 0
        ? timeoutSignal(this.#o.clock, deadlineMs, cut)
        : undefined;
    limit?.signal.addEventListener("abort", () => this.#cut.abort(limit.signal.reason), { once: true });
    try {
      await this.#app.close();
    } finally {
      limit?.clear();
    }
    return Math.max(0, deadlineMs - (this.#o.clock.now() - began));
  }

  /**
   * After a reload: route the bot's webhooks to its new runtime (`undefined`: the bot was removed).
   * Outgoing-webhook paths are fixed once listening; a bot that gains one needs a daemon restart.
   */
  setBot(name: string, bot: HttpBot | undefined): void {
    const outgoing = this.#outgoing.get(name);
    if (bot === undefined) {
      this.#bots.delete(name);
      this.#inbound.delete(name);
      // The route keeps its entry (routes are fixed once listening): a restart in a reload removes
      // the bot, then adds its new version, which must take this entry over.
      return;
    }
    this.#bots.set(name, bot);
    this.#inbound.set(name, this.#inboundOf(bot));
    if (outgoing && bot.outgoing?.path === outgoing.path) {
      Object.assign(outgoing, { runtime: bot.runtime, ...bot.outgoing });
      // Deliveries held for the old runtime wait for this one now.
      outgoing.rebound?.();
    }
  }

  #inboundOf(b: HttpBot): InboundBot {
    return {
      runtime: b.runtime,
      handlerTimeoutMs: b.handlerTimeoutMs,
      idempotencyWindowMs: (webhook) =>
        b.webhooks[webhook]?.idempotency_window ?? DEFAULT_IDEMPOTENCY_WINDOW_MS,
      senderTimeoutMs: (webhook) => b.webhooks[webhook]?.sender_timeout ?? WEBHOOK_SENDER_DEADLINE_MS,
      store: b.store.namespace(b.runtime.name).namespace("webhooks"),
      commit: b.commit,
    };
  }

  #build(): FastifyInstance {
    const o = this.#o;
    const log = o.log.child({ component: "http" });
    const app = Fastify({
      logger: false,
      bodyLimit: o.bodyLimit,
      requestTimeout: o.requestTimeoutMs,
      // Given to Node's server as it is made too: set afterwards (as fastify sets it), it left
      // headersTimeout at 60 s and a request whose body trickled in was never cut off. Checked
      // each second (Node's default is every 30 s, a limit passed being answered up to 30 s late).
      http: {
        requestTimeout: o.requestTimeoutMs,
        connectionsCheckingInterval: Math.min(1_000, Math.max(100, o.requestTimeoutMs)),
      },
      keepAliveTimeout: 5_000,
      // Answered below: an outgoing-webhook delivery must not get a 503 while the listener closes.
      return503OnClosing: false,
      forceCloseConnections: "idle",
      // A JSON key that could reach a prototype is dropped, not refused: an outgoing-webhook
      // delivery refused as unreadable is never sent again (inbound bodies are parsed alike).
      onProtoPoisoning: "remove",
      onConstructorPoisoning: "remove",
    });
    // While the listener closes (a SIGTERM's drain, the bots still running), a request arriving on
    // a kept-alive connection gets 503, as a load balancer expects, but on an outgoing-webhook path:
    // the chat server posts "Failure! Third party responded with 503" for it and never retries it,
    // so it is handled as usual (its answer closes the connection, the close waits for it).
    app.addHook("onRequest", async (request, reply) => {
      if (!this.#closing.signal.aborted) return;
      const route = request.routeOptions.url;
      if (route !== undefined && [...this.#outgoing.values()].some((b) => b.path === route)) return;
      return reply.code(503).header("connection", "close").send({ error: "the listener is closing" });
    });
    // Any other 503 of the closing listener (a webhook cut off by the stop's deadline) closes its
    // connection too: a client must not send its retry on a connection of a server going away.
    app.addHook("onSend", async (_request, reply) => {
      if (this.#closing.signal.aborted && reply.statusCode === 503) reply.header("connection", "close");
    });
    app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_req, body, done) =>
      done(null, parseForm(String(body))),
    );
    installAccessLog(app, log, o.metrics);
    installBoundedDrain(app, o.clock);
    const noRoute = (request: FastifyRequest, reply: FastifyReply) =>
      reply.code(404).send({ error: `no route for ${request.method} ${pathOf(request)}` });
    // Before the body is parsed: a path bothost does not serve gets its 404 whatever its body
    // (too large, not valid JSON), and the body is drained unread.
    app.addHook("onRequest", async (request, reply) => {
      if (request.is404) return noRoute(request, reply);
    });
    app.setNotFoundHandler(noRoute);
    app.setErrorHandler((err: FastifyError, request, reply) => {
      if (loggedClientAbort(err, request, log))
        return reply.code(400).send({ error: "the connection closed before the body was read" });
      const status = err.statusCode !== undefined && err.statusCode >= 400 ? err.statusCode : 500;
      if (status >= 500) log.error({ err, path: pathOf(request) }, "http request failed");
      return reply.code(status).send({ error: status >= 500 ? "internal error" : err.message });
    });
    const bots = () => [...this.#bots.values()];
    o.metrics.readSchedulerStats(() =>
      bots().map((b) => ({
        bot: b.runtime.name,
        stats: (b.runtime as { scheduler?: { stats?: SchedulerStatsLike } }).scheduler?.stats,
      })),
    );
    o.metrics.readBudgets(() =>
      bots().map((b) => {
        const { budget, pacing } = b.runtime.status;
        return { bot: b.runtime.name, buckets: budget ?? [], pacing };
      }),
    );
    o.metrics.readDialogs(() =>
      bots().map((b) => ({ bot: b.runtime.name, waiting: b.runtime.status.dialogsWaiting ?? 0 })),
    );
    o.metrics.readStoreHealth(() =>
      bots().map((b) => {
        const { state, storeFailure, storeWriteFailures, storeWaits } = b.runtime.status;
        return {
          bot: b.runtime.name,
          // As /readyz: a standby bot writes nothing here (a failure it met before it moved is stale).
          failing: storeFailure !== undefined && state !== "standby",
          failures: storeWriteFailures ?? NONE,
          waits: storeWaits ?? 0,
        };
      }),
    );
    const readiness = () =>
      readinessOf(
        bots().map((b) => ({
          ...b.runtime.status,
          failure: o.startFailure?.(b.runtime.name),
          leaseLost: o.leaseLost?.(b.runtime.name),
          leaseHolder: o.leaseHolder?.(b.runtime.name),
        })),
        o.clock.now(),
      );
    o.metrics.readReadiness(() => readiness().bots);
    app.get("/healthz", async () => ({ status: "ok" }));
    app.get("/readyz", async (_request, reply) => {
      const result = readiness();
      return reply.code(result.ready ? 200 : 503).send(result);
    });
    app.get("/metrics", async (_request, reply) =>
      reply.type(o.metrics.registry.contentType).send(await o.metrics.registry.metrics()),
    );
    for (const b of o.bots)
      if (b.outgoing) this.#outgoing.set(b.runtime.name, { runtime: b.runtime, ...b.outgoing });
    registerOutgoingRoutes(
      app,
      [...this.#outgoing.values()],
      log,
      o.clock,
      (name) => o.startFailure?.(name) !== undefined,
      this.#cut.signal,
    );
    if (o.admin) {
      const host = parseListenAddress(o.listen)?.host ?? "";
      if (!registerAdminRoutes(app, { host, ...o.admin })) {
        log.info(
          { listen: o.listen },
          "admin routes off: http.listen is not loopback and http.admin_token is not set",
        );
      }
    }
    for (const b of o.bots) this.#inbound.set(b.runtime.name, this.#inboundOf(b));
    registerInboundRoutes(app, {
      bots: this.#inbound,
      log,
      bodyLimit: o.bodyLimit,
      stopping: this.#cut.signal,
      clock: o.clock,
      counts: this.webhookRequests,
    });
    return app;
  }
}

function checkPaths(bots: readonly HttpBot[]): void {
  const seen = new Map<string, string>();
  for (const b of bots) {
    if (!b.outgoing) continue;
    const { path } = b.outgoing;
    const name = b.runtime.name;
    const why = outgoingPathProblem(path, name, seen.get(path));
    if (why)
      throw new HttpConfigError("HTTP_CONFIG_INVALID", `bots.${name}.outgoing_webhook.path "${path}" ${why}`);
    seen.set(path, name);
  }
}
