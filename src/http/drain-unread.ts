/**
 * A request answered before its body was read (413, 401, 404, …): the rest of the body is read
 * and dropped, up to a bound, so that the client can read the answer. Closing the connection
 * while a client still sends makes its kernel drop the unread answer (a reset): Node's `fetch`
 * then reports EPIPE, and a sender retries the same body. Past the bound (bytes or time) the
 * connection is closed after all.
 */
import type { IncomingMessage } from "node:http";
import type { FastifyInstance } from "fastify";
import type { Clock } from "../time/clock.ts";

export interface DrainBound {
  /** Bytes read past the answer before the connection is closed. */
  bytes: number;
  /** How long the rest of the body may take. */
  ms: number;
}

export const DRAIN_BOUND: DrainBound = { bytes: 64 * 1024 * 1024, ms: 10_000 };

/** Drain every request answered with its body unread; its connection stays open for the next request. */
export function installBoundedDrain(app: FastifyInstance, clock: Clock, bound = DRAIN_BOUND): void {
  app.addHook("onSend", async (request, reply, payload) => {
    const raw = request.raw;
    if (raw.complete || raw.destroyed) return payload;
    // Fastify asks to close after a refused body; closing now would lose the answer (see above).
    reply.removeHeader("connection");
    drain(raw, clock, bound);
    return payload;
  });
}

function drain(raw: IncomingMessage, clock: Clock, bound: DrainBound): void {
  let seen = 0;
  const close = () => {
    done();
    raw.socket?.destroy();
  };
  const onData = (chunk: Buffer | string) => {
    seen += chunk.length;
    if (seen > bound.bytes) close();
  };
  const timer = clock.setTimeout(() => {
    if (!raw.complete) close();
  }, bound.ms);
  const done = () => {
    clock.clearTimeout(timer);
    raw.off("data", onData);
  };
  raw.on("data", onData);
  raw.once("end", done);
  raw.once("close", done);
  raw.resume();
}
