/**
 * One structured line per request, and the webhook request counter. Never logged: headers, bodies,
 * signatures, or the query string (which may hold a token).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Logger } from "pino";

/** Requests a scraper or a load balancer repeats all day: logged at debug level. */
const QUIET = new Set(["/healthz", "/readyz", "/metrics"]);

const metricRoutes = new WeakMap<FastifyRequest, string>();
/** Read when the request arrives: a socket the sender closed has no address any more. */
const remoteAddresses = new WeakMap<FastifyRequest, string | undefined>();

/** Count this request under `route` in `bothost_webhook_requests_total` (a bounded label). */
export function countAsWebhook(request: FastifyRequest, route: string): void {
  metricRoutes.set(request, route);
}

export function pathOf(request: FastifyRequest): string {
  const url = request.raw.url ?? "/";
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** Where webhook requests are counted (the daemon's `bothost_webhook_requests_total`). */
export interface WebhookRequestCounter {
  webhookRequests: { inc(labels: { route: string; status: number }): void };
}

/**
 * Whether `err` is the sender hanging up before its body was read: its failure, not bothost's (no
 * answer reaches it), logged as such. No response follows, so the access log has no line for it.
 */
export function loggedClientAbort(err: { code?: string }, request: FastifyRequest, log: Logger): boolean {
  if (!request.raw.readableAborted || err.code !== "ECONNRESET") return false;
  const line = {
    method: request.method,
    path: pathOf(request),
    remoteAddress: remoteAddresses.get(request) ?? request.ip,
  };
  log.info(line, "http request: the client closed the connection before its body was read");
  return true;
}

export function installAccessLog(app: FastifyInstance, log: Logger, metrics: WebhookRequestCounter): void {
  app.addHook("onRequest", async (request) => {
    remoteAddresses.set(request, request.ip);
  });
  app.addHook("onResponse", async (request, reply) => {
    const path = pathOf(request);
    const status = reply.statusCode;
    const route = metricRoutes.get(request);
    if (route !== undefined) metrics.webhookRequests.inc({ route, status });
    const line = {
      method: request.method,
      path,
      ...(request.routeOptions.url ? { route: request.routeOptions.url } : {}),
      status,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      remoteAddress: request.ip,
    };
    if (QUIET.has(path) && status < 400) log.debug(line, "http request");
    else log.info(line, "http request");
  });
}
