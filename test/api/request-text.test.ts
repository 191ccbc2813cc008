/**
 * requestText, the one way the client's calls go out, against a real HTTP server on port 0 whose
 * answers are written piece by piece: bodies split anywhere, repeated headers, an abort at each
 * stage of the exchange, undici's timeouts.
 */
import { getEventListeners } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Dispatcher } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestText } from "../../src/api/request-text.ts";
import { ConnectionPool } from "../../src/api/undici-core.ts";
import { deferred } from "../support/deferred.ts";

/** What the server does with each path; `seen` counts requests per path. */
const routes: Record<string, (res: ServerResponse) => void> = {};
const seen: Record<string, number> = {};
const server = createServer((req, res) => {
  seen[req.url!] = (seen[req.url!] ?? 0) + 1;
  routes[req.url!]?.(res);
});
let origin: string;
let pool: InstanceType<typeof ConnectionPool>;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  pool = new ConnectionPool(origin);
});
afterAll(async () => {
  await pool.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const get = (path: string, signal?: AbortSignal, timeoutMs = 5_000) =>
  requestText(
    pool,
    { origin, path, method: "GET", headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
    signal,
  );

/** Rejects with what `promise` rejected with, or fails the test if it resolved. */
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("resolved, expected a rejection");
    },
    (err: unknown) => err,
  );

describe("requestText", () => {
  it("decodes a body sent in pieces that split a character, and keeps every header", async () => {
    const body = Buffer.from(JSON.stringify({ result: "success", msg: "ünïcødé 🙂 ".repeat(50) }));
    routes["/split"] = (res) => {
      res.writeHead(200, [
        ["Content-Type", "application/json"],
        ["X-RateLimit-Remaining", "199"],
        ["Set-Cookie", "a=1"],
        ["Set-Cookie", "b=2"],
      ]);
      // One byte at a time for the first 64 bytes (inside multi-byte characters), then the rest.
      let at = 0;
      const next = () => {
        if (at >= body.length) return void res.end();
        const size = at < 64 ? 1 : body.length;
        res.write(body.subarray(at, at + size));
        at += size;
        setImmediate(next);
      };
      next();
    };
    const response = await get("/split");
    expect(response.statusCode).toBe(200);
    expect(response.text).toBe(body.toString("utf8"));
    expect(response.headers["content-type"]).toBe("application/json");
    expect(response.headers["x-ratelimit-remaining"]).toBe("199");
    expect(response.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
  });

  it("decodes a large answer that declares its length, sent in pieces that split characters", async () => {
    // Past 256 KB, a declared body is gathered into one buffer as it arrives.
    const body = Buffer.from(JSON.stringify({ result: "success", events: "ünïcødé 🙂 ".repeat(40_000) }));
    expect(body.length).toBeGreaterThan(512 * 1024);
    routes["/large"] = (res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
      // Pieces of 4,099 bytes: an odd size, so that most of them end inside a multi-byte character.
      let at = 0;
      const next = () => {
        if (at >= body.length) return void res.end();
        res.write(body.subarray(at, at + 4_099));
        at += 4_099;
        setImmediate(next);
      };
      next();
    };
    const response = await get("/large");
    expect(response.text).toBe(body.toString("utf8"));
    expect(response.text.length).toBe(body.toString("utf8").length);
  });

  it("rejects an answer whose connection closes before its declared length came", async () => {
    routes["/short"] = (res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": 1_000_000 });
      res.write(Buffer.alloc(300_000, "a"));
      setImmediate(() => res.socket?.destroy());
    };
    const err = await rejection(get("/short"));
    expect((err as { code?: string }).code).toMatch(/^UND_ERR_/);
  });

  it("gives the status and body of an error answer as they are", async () => {
    routes["/teapot"] = (res) => res.writeHead(418, { "content-type": "text/html" }).end("<p>no</p>");
    expect(await get("/teapot")).toMatchObject({ statusCode: 418, text: "<p>no</p>" });
  });

  it("rejects with the signal's reason, whether it aborts before sending, while parked or mid-body", async () => {
    const reason = new Error("stopping");
    // Before: nothing is sent.
    const before = AbortSignal.abort(reason);
    expect(await rejection(get("/never", before))).toBe(reason);

    // While the server holds the request (a parked long poll).
    routes["/parked"] = () => {};
    const parked = new AbortController();
    const waiting = rejection(get("/parked", parked.signal));
    await until(() => seen["/parked"] === 1);
    parked.abort(reason);
    expect(await waiting).toBe(reason);

    // After the headers and part of the body.
    routes["/half"] = (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"result":"succ');
    };
    const half = new AbortController();
    const { dispatcher, bodyStarted } = watchingBody();
    const reading = rejection(requestText(dispatcher, { origin, path: "/half", method: "GET" }, half.signal));
    await bodyStarted;
    half.abort(reason);
    expect(await reading).toBe(reason);

    // The pool still serves calls afterwards.
    routes["/ok"] = (res) => res.end("{}");
    expect((await get("/ok")).text).toBe("{}");
    expect(seen["/never"]).toBeUndefined();
  });

  it("rejects with undici's timeout error when no answer comes", async () => {
    routes["/slow"] = () => {};
    const err = await rejection(get("/slow", undefined, 200));
    expect((err as { code?: string }).code).toBe("UND_ERR_HEADERS_TIMEOUT");
  });

  it("a signal that never aborts is released once the answer is in", async () => {
    routes["/ok"] = (res) => res.end("{}");
    const signal = new AbortController().signal;
    for (let i = 0; i < 20; i++) await get("/ok", signal);
    // Each call removes its listener: none is left on the long-lived signal.
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
  });
});

/** The pool, with a promise that resolves once the first piece of an answer's body came in. */
function watchingBody(): { dispatcher: Dispatcher; bodyStarted: Promise<void> } {
  const started = deferred();
  const dispatch = (options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) =>
    pool.dispatch(options, {
      onRequestStart: (...args) => handler.onRequestStart?.(...args),
      onResponseStart: (...args) => handler.onResponseStart?.(...args),
      onResponseData: (...args) => {
        handler.onResponseData?.(...args);
        started.resolve();
      },
      onResponseEnd: (...args) => handler.onResponseEnd?.(...args),
      onResponseError: (...args) => handler.onResponseError?.(...args),
    });
  return { dispatcher: { dispatch } as unknown as Dispatcher, bodyStarted: started.promise };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}
