/**
 * An event server that behaves like the real one's queue (docs/internals/server-behaviour.md#the-event-queue),
 * in a child process so its CPU is not the client's. Events are produced at a set rate or in a
 * burst and accumulate in every registered queue; a poll takes everything waiting, a parked poll is
 * answered as soon as something arrives (or by a heartbeat after 45–55 s), a newer poll on the
 * same queue finishes the parked one, and an acknowledgement prunes. Every authenticated call
 * counts against the account's limits (200 a minute and 2,000 an hour, event-queue calls in a
 * bucket of their own as the server's event process keeps them), with the rate-limit headers on
 * each answer and 429 + `Retry-After` past them. An account whose email starts with `unlimited`
 * is exempt (the bench's unpaced bare loop: a real server would refuse it).
 *
 * Message bodies are serialized once at start; each answer joins the waiting ones. IPC ops:
 * `arm { rate, seconds, burst }`: when the next queue's first poll parks (the contender is up and
 * waiting) the server says `{ type: "parked" }` and waits for `go`, so the bench can read the
 * contender's CPU time first; then a burst of `burst` events at once, and `rate` events a second
 * for `seconds`. `result`: when each event was produced (epoch ms), and per account its
 * calls, refusals and largest answer.
 *
 * Usage (forked): queue-server.ts --events 50000 [--heartbeat 50] → sends { port } over IPC.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { parseArgs } from "node:util";
import { busiest } from "../lib/stats.ts";
import { messageEvent, registerBody, seeded } from "./event-data.ts";

const { values } = parseArgs({
  options: { events: { type: "string", default: "50000" }, heartbeat: { type: "string", default: "50" } },
});
const capacity = Number(values.events);
const heartbeatMs = Number(values.heartbeat) * 1000;

/** Event k's JSON up to its queue id, which each queue appends (`…"id":N}`). */
const heads: string[] = [];
{
  const random = seeded(42);
  for (let k = 0; k < capacity; k++) {
    const json = JSON.stringify(messageEvent(k, random, true));
    heads.push(json.slice(0, json.lastIndexOf('"id":') + 5));
  }
}

const now = () => performance.timeOrigin + performance.now();

interface Queue {
  id: string;
  account: Account;
  /** Waiting events' JSON with their ids, oldest first from `head`. */
  texts: string[];
  ids: number[];
  head: number;
  nextId: number;
  newestPruned: number;
  parked: ServerResponse | undefined;
  beat: NodeJS.Timeout | undefined;
}

interface Account {
  events: number[];
  other: number[];
  calls: number;
  refused: number;
  polls: number;
  largest: number;
  unlimited: boolean;
}

const RULES: [number, number][] = [
  [60_000, 200],
  [3_600_000, 2_000],
];
const accounts = new Map<string, Account>();
const queues = new Map<string, Queue>();
let registered = 0;

/** Production: armed, then started by the next queue's first parked poll. */
let plan: { rate: number; seconds: number; burst: number } | undefined;
let produced = 0;
let producedAt = new Float64Array(0);
let ticker: NodeJS.Timeout | undefined;
/** The bench was told a poll parked; production starts on its `go`. */
let waiting = false;

function produce(count: number): void {
  const end = Math.min(capacity, produced + count);
  const at = now();
  for (; produced < end; produced++) {
    producedAt[produced] = at;
    for (const q of queues.values()) push(q, heads[produced] as string);
  }
  for (const q of queues.values()) if (q.parked && q.ids.length > q.head) answer(q, true);
}

function push(q: Queue, head: string): void {
  const id = q.nextId++;
  q.texts.push(`${head}${id}}`);
  q.ids.push(id);
}

function start(): void {
  const p = plan;
  plan = undefined;
  if (!p) return;
  produced = 0;
  producedAt = new Float64Array(p.burst + Math.ceil(p.rate * p.seconds));
  if (p.burst > 0) produce(p.burst);
  const total = producedAt.length;
  if (p.rate <= 0) return;
  const t0 = now();
  ticker = setInterval(() => {
    const due = p.burst + Math.min(total - p.burst, Math.floor(((now() - t0) / 1000) * p.rate));
    if (due > produced) produce(due - produced);
    if (produced >= total) clearInterval(ticker);
  }, 1);
}

function accountOf(req: IncomingMessage): Account {
  const auth = req.headers.authorization ?? "";
  const email =
    Buffer.from(auth.replace(/^Basic /, ""), "base64")
      .toString("utf8")
      .split(":")[0] ?? "";
  let account = accounts.get(email);
  if (!account) {
    account = {
      events: [],
      other: [],
      calls: 0,
      refused: 0,
      polls: 0,
      largest: 0,
      unlimited: email.startsWith("unlimited"),
    };
    accounts.set(email, account);
  }
  return account;
}

/** Count the call (false: refused with 429), and set the rate-limit headers as the server does. */
function admit(account: Account, bucket: "events" | "other", res: ServerResponse): boolean {
  const t = Date.now();
  // Every call is kept (the busiest minute is reported); a window is counted from the newest.
  const calls = account[bucket];
  let retryMs = 0;
  let hourly = 0;
  for (const [window, limit] of RULES) {
    let inWindow = 0;
    for (let i = calls.length - 1; i >= 0 && (calls[i] as number) > t - window; i--) inWindow++;
    hourly = inWindow;
    if (inWindow >= limit) {
      const nth = calls[calls.length - limit] as number;
      retryMs = Math.max(retryMs, nth + window - t);
    }
  }
  if (account.unlimited) retryMs = 0;
  res.setHeader("x-ratelimit-limit", "2000");
  res.setHeader("x-ratelimit-remaining", String(Math.max(0, 2000 - hourly - (retryMs > 0 ? 0 : 1))));
  res.setHeader("x-ratelimit-reset", String(Math.floor((t + Math.max(retryMs, 0)) / 1000)));
  if (retryMs > 0) {
    account.refused++;
    const seconds = retryMs / 1000;
    res.writeHead(429, { "content-type": "application/json", "retry-after": String(seconds) });
    res.end(
      JSON.stringify({
        result: "error",
        msg: "API usage exceeded rate limit",
        code: "RATE_LIMIT_HIT",
        "retry-after": seconds,
      }),
    );
    return false;
  }
  calls.push(t);
  account.calls++;
  return true;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Answer the queue's parked poll (or `res`) with every waiting event. */
function answer(q: Queue, parked: boolean, res = q.parked): void {
  if (!res) return;
  if (parked) {
    q.parked = undefined;
    clearTimeout(q.beat);
  }
  const count = q.ids.length - q.head;
  q.account.largest = Math.max(q.account.largest, count);
  const events = q.head === 0 ? q.texts : q.texts.slice(q.head);
  // The asynchronous completion of a parked poll carries queue_id; an immediate one does not.
  const tail = parked ? `],"queue_id":"${q.id}"}` : "]}";
  const body = `{"result":"success","msg":"","events":[${events.join(",")}${tail}`;
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

function register(res: ServerResponse, account: Account): void {
  const id = `q${++registered}`;
  queues.set(id, {
    id,
    account,
    texts: [],
    ids: [],
    head: 0,
    nextId: 0,
    newestPruned: -1,
    parked: undefined,
    beat: undefined,
  });
  json(res, 200, registerBody(id));
}

function events(url: URL, res: ServerResponse, account: Account): void {
  const q = queues.get(url.searchParams.get("queue_id") ?? "");
  if (!q || q.account !== account) {
    json(res, 400, { result: "error", msg: "Bad event queue ID", code: "BAD_EVENT_QUEUE_ID" });
    return;
  }
  account.polls++;
  const last = Number(url.searchParams.get("last_event_id") ?? "-1");
  if (last < q.newestPruned) {
    json(res, 400, {
      result: "error",
      msg: `An event newer than ${last} has already been pruned!`,
      code: "BAD_REQUEST",
    });
    return;
  }
  while (q.head < q.ids.length && (q.ids[q.head] as number) <= last)
    q.newestPruned = q.ids[q.head++] as number;
  if (q.head > 4096 && q.head * 2 > q.ids.length) {
    q.texts = q.texts.slice(q.head);
    q.ids = q.ids.slice(q.head);
    q.head = 0;
  }
  if (q.newestPruned !== last) {
    json(res, 400, { result: "error", msg: `Event ${last} was not in this queue`, code: "BAD_REQUEST" });
    return;
  }
  if (q.parked) answer(q, true);
  if (q.ids.length > q.head) {
    answer(q, false, res);
    return;
  }
  q.parked = res;
  q.beat = setTimeout(
    () => {
      push(q, '{"type":"heartbeat","id":');
      answer(q, true);
    },
    heartbeatMs * (0.9 + 0.2 * Math.random()),
  );
  res.on("close", () => {
    if (q.parked !== res) return;
    q.parked = undefined;
    clearTimeout(q.beat);
  });
  if (plan && !waiting) {
    waiting = true;
    process.send?.({ type: "parked" });
  }
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://localhost");
  req.resume();
  req.on("end", () => {
    const path = url.pathname.replace(/^\/api\/v1/, "");
    const account = accountOf(req);
    if (!admit(account, path === "/events" ? "events" : "other", res)) return;
    if (path === "/register" && req.method === "POST") register(res, account);
    else if (path === "/events" && req.method === "GET") events(url, res, account);
    else if (path === "/events" && req.method === "DELETE") json(res, 200, { result: "success", msg: "" });
    else if (path === "/messages" && req.method === "GET") {
      json(res, 200, {
        result: "success",
        msg: "",
        messages: [],
        anchor: 0,
        found_anchor: false,
        found_newest: true,
        found_oldest: true,
      });
    } else json(res, 404, { result: "error", msg: "Not found", code: "BAD_REQUEST" });
  });
}

process.on("message", (raw) => {
  const msg = raw as { id: number; op: string; rate?: number; seconds?: number; burst?: number };
  if (msg.op === "arm") {
    clearInterval(ticker);
    for (const q of queues.values()) clearTimeout(q.beat);
    queues.clear();
    accounts.clear();
    const total = (msg.burst ?? 0) + Math.ceil((msg.rate ?? 0) * (msg.seconds ?? 0));
    if (total > capacity) {
      process.send?.({ id: msg.id, error: `${total} events asked, the server holds ${capacity}` });
      return;
    }
    plan = { rate: msg.rate ?? 0, seconds: msg.seconds ?? 0, burst: msg.burst ?? 0 };
    waiting = false;
    process.send?.({ id: msg.id, result: true });
  } else if (msg.op === "go") {
    waiting = false;
    start();
    process.send?.({ id: msg.id, result: true });
  } else if (msg.op === "result") {
    const byAccount = Object.fromEntries(
      [...accounts].map(([email, a]) => [
        email,
        {
          calls: a.calls,
          refused: a.refused,
          polls: a.polls,
          largest: a.largest,
          busiestMinute: { events: busiest(a.events, 60_000), other: busiest(a.other, 60_000) },
        },
      ]),
    );
    process.send?.({
      id: msg.id,
      result: { producedAt: [...producedAt.subarray(0, produced)], accounts: byAccount },
    });
  }
});

const server = createServer({ keepAliveTimeout: 120_000 }, handle);
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.send?.({ type: "ready", port });
});
process.on("disconnect", () => process.exit(0));
