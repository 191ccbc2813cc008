import { readFileSync } from "node:fs";
import { describe, expect, vi } from "vitest";
import { createClient, parseServerAddress, sharedPool } from "../../src/api/create-client.ts";
import { ClientConfigError } from "../../src/api/errors.ts";
import { API_KEY, EMAIL, test } from "../support/api/client-fixture.ts";
import * as rec from "../support/api/records.ts";
import { success } from "../support/api/test-server.ts";

const version = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/** A password or token written into a `url`, which no error may repeat. */
const IN_URL = "pa55-in-url";

describe("createClient", () => {
  test("sends User-Agent bothost/<version> by default, or the one given", async ({ server, makeClient }) => {
    server.reply(success(rec.ownUser), success(rec.ownUser));
    await makeClient().users.me();
    await makeClient({ userAgent: "EchoBot/2.0" }).users.me();
    expect(server.requests.map((r) => r.headers["user-agent"])).toEqual([
      `bothost/${version}`,
      "EchoBot/2.0",
    ]);
  });

  test("clients of one server share one connection pool, each with its own credentials", async ({
    server,
  }) => {
    const emails = Array.from({ length: 10 }, (_, i) => `bot${i}@x.org`);
    const clients = emails.map((email, i) =>
      createClient({ url: i % 2 ? `${server.url}/` : server.url, email, apiKey: API_KEY, rateLimit: false }),
    );
    expect(new Set(clients.map((c) => sharedPool(c.origin))).size).toBe(1);
    server.fallback = success(rec.ownUser);
    for (const client of clients) {
      await client.users.me();
      await client.users.me();
    }
    // Ten clients with their own pools would open at least ten connections.
    expect(new Set(server.requests.map((r) => r.remotePort)).size).toBeLessThanOrEqual(3);
    const user = (auth: string | undefined) =>
      Buffer.from(String(auth).replace("Basic ", ""), "base64").toString().split(":")[0];
    expect(server.requests.map((r) => user(r.headers.authorization))).toEqual(emails.flatMap((e) => [e, e]));
  });

  test.for([
    [{ url: "", email: EMAIL, apiKey: API_KEY }, "createClient: option `url` is missing or empty."],
    [{ url: "https://x", email: " ", apiKey: API_KEY }, "createClient: option `email` is missing or empty."],
    [{ url: "https://x", email: EMAIL, apiKey: "" }, "createClient: option `apiKey` is missing or empty."],
    [
      { url: "ftp://x", email: EMAIL, apiKey: API_KEY },
      "createClient option `url` must start with http:// or https://, not ftp:.",
    ],
    [
      { url: `mailto:${IN_URL}@x.org`, email: EMAIL, apiKey: API_KEY },
      "createClient option `url` must start with http:// or https://, not mailto:.",
    ],
    [
      { url: "notaurl", email: EMAIL, apiKey: API_KEY },
      'createClient option `url` "notaurl" has no scheme and is not a domain name: write the whole address, ' +
        'like "https://chat.example.org", or "http://notaurl" for a server of that name on the local network.',
    ],
    [
      { url: `https://x y/${IN_URL}`, email: EMAIL, apiKey: API_KEY },
      "createClient option `url` is not a valid server URL: write the organization's address",
    ],
    [
      { url: `https://bot:${IN_URL}@chat.example.org`, email: EMAIL, apiKey: API_KEY },
      'createClient option `url` must not carry a user name or password (before "@")',
    ],
    [
      { url: `https://chat.example.org/?api_key=${IN_URL}`, email: EMAIL, apiKey: API_KEY },
      'createClient option `url` must not have a query ("?…") or a fragment ("#…")',
    ],
    [
      { url: "https://x", email: EMAIL, apiKey: API_KEY, timeoutMs: 0 },
      "createClient: option `timeoutMs` must be a positive number, got 0.",
    ],
    [
      { url: "https://x", email: EMAIL, apiKey: API_KEY, rateLimit: { perMinute: -1 } },
      "createClient: option `rateLimit.perMinute` must be a positive number, got -1.",
    ],
    [
      { url: "https://x", email: EMAIL, apiKey: API_KEY, timeoutMS: 5_000 } as never,
      "createClient: `timeoutMS` is not an option: did you mean `timeoutMs`?",
    ],
  ] as const)("rejects bad options: %j", ([options, message]) => {
    let error: unknown;
    try {
      createClient(options);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ClientConfigError);
    expect((error as Error).message.startsWith(message)).toBe(true);
    expect((error as Error).message).not.toContain(API_KEY);
    expect((error as Error).message).not.toContain(IN_URL);
  });

  test("each client's long polls have a connection of their own; its other calls share the pool", async ({
    server,
  }) => {
    const make = (email: string) =>
      createClient({ url: server.url, email, apiKey: API_KEY, rateLimit: false, retry: false });
    const [a, b] = [make("a-bot@x.org"), make("b-bot@x.org")];
    const stop = new AbortController();
    const parked = (client: typeof a) =>
      client.events.get({ queue_id: "q" }, { signal: stop.signal }).catch(() => undefined);
    server.reply({ hang: true }, success({ id: 1 }), success({ id: 2 }), { hang: true });
    const polls = [parked(a)];
    const send = { type: "channel" as const, to: 1, topic: "t", content: "hi" };
    await vi.waitFor(() => expect(server.requests).toHaveLength(1), { timeout: 5_000 });
    // While a's poll is parked, a's send and then b's go out at once, on pooled connections.
    await a.messages.send(send);
    await b.messages.send(send);
    // b's poll would take a pooled connection left idle by the sends; it has one of its own.
    polls.push(parked(b));
    await vi.waitFor(() => expect(server.requests).toHaveLength(4), { timeout: 5_000 });
    const [pollA, sendA, sendB, pollB] = server.requests.map((r) => r.remotePort);
    expect(pollB).not.toBe(pollA);
    expect([pollA, pollB]).not.toContain(sendA);
    expect([pollA, pollB]).not.toContain(sendB);
    stop.abort();
    await Promise.all(polls);
  });

  test("a client's second poll at once does not wait behind its parked one", async ({
    server,
    makeClient,
  }) => {
    const client = makeClient({ retry: false });
    const stop = new AbortController();
    server.reply({ hang: true }, { hang: true });
    const polls = ["q1", "q2"].map((queue_id) =>
      client.events.get({ queue_id }, { signal: stop.signal }).catch(() => undefined),
    );
    await vi.waitFor(() => expect(server.requests.map((r) => r.query.queue_id)).toEqual(["q1", "q2"]), {
      timeout: 5_000,
    });
    stop.abort();
    await Promise.all(polls);
  });

  test("the escape hatch takes a path relative to /api/v1 with or without its leading slash", async ({
    server,
    makeClient,
  }) => {
    const client = makeClient();
    server.reply(success({ alert_words: [] }), success({ alert_words: [] }));
    await client.request("GET", "/users/me/alert_words");
    await client.request("GET", "users/me/alert_words");
    expect(server.requests.map((r) => r.path)).toEqual([
      "/api/v1/users/me/alert_words",
      "/api/v1/users/me/alert_words",
    ]);
  });

  test("the client object exposes no secret", ({ makeClient }) => {
    const client = makeClient();
    expect(Object.keys(client)).not.toContain("apiKey");
    expect(JSON.stringify(client)).not.toContain(API_KEY);
  });
});

describe("server addresses", () => {
  test.for([
    ["https://chat.example.org", "https://chat.example.org", "/api/v1"],
    ["https://chat.example.org/", "https://chat.example.org", "/api/v1"],
    ["https://chat.example.org/api", "https://chat.example.org", "/api/v1"],
    ["https://chat.example.org/api/v1/", "https://chat.example.org", "/api/v1"],
    ["chat.example.org", "https://chat.example.org", "/api/v1"],
    ["localhost:9991", "http://localhost:9991", "/api/v1"],
    ["chat.example.org:8443/chat", "https://chat.example.org:8443", "/chat/api/v1"],
    ["http://zulip", "http://zulip", "/api/v1"],
    ["[::1]:9991", "https://[::1]:9991", "/api/v1"],
    ["https://example.org/chat/", "https://example.org", "/chat/api/v1"],
  ] as const)("%s → %s %s", ([site, origin, apiBase]) => {
    expect(parseServerAddress(site, "test")).toEqual({ origin, apiBase });
  });

  test("a server under a path prefix gets requests under that prefix", async ({ server }) => {
    const client = createClient({
      url: `${server.url}/chat`,
      email: EMAIL,
      apiKey: API_KEY,
      rateLimit: false,
    });
    await client.events.deleteQueue("q");
    expect(server.requests[0]?.path).toBe("/chat/api/v1/events");
  });
});
