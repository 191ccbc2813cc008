/**
 * `/healthz` (the process answers), `/readyz` (every bot can receive events) and `/metrics`
 * (Prometheus text format).
 */
import type { FastifyInstance } from "fastify";
import type { BothostMetrics } from "./bothost-metrics.ts";
import { type ReadinessInput, readinessOf } from "./readiness.ts";

export interface HealthDeps {
  metrics: BothostMetrics;
  statuses(): readonly ReadinessInput[];
  now(): number;
}

export function registerHealthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  app.get("/healthz", async () => ({ status: "ok" }));

  app.get("/readyz", async (_request, reply) => {
    const result = readinessOf(deps.statuses(), deps.now());
    return reply.code(result.ready ? 200 : 503).send(result);
  });

  app.get("/metrics", async (_request, reply) => {
    return reply.type(deps.metrics.contentType).send(await deps.metrics.render());
  });
}
