/**
 * A purpose-built event server for the dispatch benchmark, run as a child process so its CPU is
 * not the client's. It answers just enough of the API for a bot to start (register, GET /messages
 * empty) and serves `total` pre-generated message events from GET /events, `batch` per poll,
 * from bodies serialized before the first request: a poll costs it one buffer write, so the
 * client, not the server, is what the benchmark measures. Each queue reads the same events from
 * the start. Past the last event a poll is parked and never answered (the contender is done).
 *
 * With `--heartbeat S`, a parked poll is answered after S seconds (±10%, at random) with a
 * heartbeat event, as the real server does every 45–55 s: what an idle bot receives.
 *
 * Usage (forked): event-server.ts --total 100000 --batch 1000 [--long] [--heartbeat 50] → sends { port } over IPC.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { parseArgs } from "node:util";
import { eventsBody, registerBody, seeded } from "./event-data.ts";

const { values } = parseArgs({
  options: {
    total: { type: "string", default: "100000" },
    batch: { type: "string", default: "1000" },
    long: { type: "boolean", default: false },
    heartbeat: { type: "string" },
  },
});
const total = Number(values.total);
const batch = Number(values.batch);
const long = values.long ?? false;
const heartbeatMs = values.heartbeat === undefined ? undefined : Number(values.heartbeat) * 1000;

const random = seeded(42);
const chunks: Buffer[] = [];
for (let from = 0; from < total; from += batch) {
  chunks.push(Buffer.from(eventsBody(from, Math.min(batch, total - from), random, long)));
}

let queues = 0;
/** Events each queue may read: `total`, or N for an account named `limit-N@…` (see dispatch.ts). */
const limits = new Map<string, number>();
const parked = new Set<ServerResponse>();

function json(res: ServerResponse, body: unknown): void {
  send(res, Buffer.from(JSON.stringify(body)));
}

function send(res: ServerResponse, body: Buffer): void {
  res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
  res.end(body);
}

function limitOf(req: IncomingMessage): number {
  const auth = req.headers.authorization ?? "";
  const user = Buffer.from(auth.replace(/^Basic /, ""), "base64").toString("utf8");
  const match = /^limit-(\d+)@/.exec(user);
  return match ? Math.min(total, Number(match[1])) : total;
}

function register(req: IncomingMessage, res: ServerResponse): void {
  queues++;
  limits.set(`q${queues}`, limitOf(req));
  json(res, registerBody(`q${queues}`));
}

function events(url: URL, res: ServerResponse): void {
  const next = Number(url.searchParams.get("last_event_id") ?? "-1") + 1;
  const limit = limits.get(url.searchParams.get("queue_id") ?? "") ?? total;
  if (next >= limit) {
    parked.add(res);
    const beat =
      heartbeatMs === undefined
        ? undefined
        : setTimeout(
            () => json(res, { result: "success", msg: "", events: [{ type: "heartbeat", id: next }] }),
            heartbeatMs * (0.9 + 0.2 * Math.random()),
          );
    res.on("close", () => {
      parked.delete(res);
      clearTimeout(beat);
    });
    return;
  }
  const whole = next % batch === 0 && next + batch <= limit;
  const chunk = whole ? chunks[next / batch] : undefined;
  if (chunk) {
    send(res, chunk);
    return;
  }
  // Not on a batch boundary (a client that acknowledged part of a batch): build it on the fly.
  send(res, Buffer.from(eventsBody(next, Math.min(batch, limit - next), seeded(next), long)));
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://localhost");
  // Drain any request body (form-encoded register parameters) before answering.
  req.resume();
  req.on("end", () => {
    const path = url.pathname.replace(/^\/api\/v1/, "");
    if (path === "/register" && req.method === "POST") register(req, res);
    else if (path === "/events" && req.method === "GET") events(url, res);
    else if (path === "/events" && req.method === "DELETE") json(res, { result: "success", msg: "" });
    else if (path === "/messages" && req.method === "GET") {
      json(res, {
        result: "success",
        msg: "",
        messages: [],
        anchor: 0,
        found_anchor: false,
        found_newest: true,
        found_oldest: true,
      });
    } else {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ result: "error", msg: "Not found", code: "BAD_REQUEST" }));
    }
  });
}

const server = createServer({ keepAliveTimeout: 120_000 }, handle);
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.send?.({ type: "ready", port, chunks: chunks.length });
});
process.on("disconnect", () => process.exit(0));
