/**
 * Inbound webhooks over real HTTP: each verifier accepts a good request and refuses a bad one
 * (401, no handler), repeats are dropped, oversized bodies get 413, unknown routes 404 and other
 * methods 405; ctx.state writes apply once the handler succeeded, and a `ctx.external` call is
 * made once per request key.
 */
import { createHmac } from "node:crypto";
import { Readable } from "node:stream";
import { request } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { formatStatus } from "../../src/cli/status.ts";
import type { WebhookContext } from "../../src/pipeline/context.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type RunningDaemon, startDaemon } from "../support/http-daemon.ts";

const SECRET = "gh-secret-value-123";
const HMAC_SECRET = "hmac-secret-value-456";
const BEARER = "bearer-token-value-789";
const SHARED = "shared-secret-value-000";
const SLACK_SECRET = "slack-signing-secret-321";

let sandbox: Sandbox;
let running: RunningDaemon;
let calls: { name: string; body: unknown; key: string | undefined; query: unknown }[] = [];
let failNext = false;
/** Tickets the "ticket" webhook's external call opened. */
let tickets = 0;

function hooks(b: BotApi): void {
  const record = (name: string) => async (ctx: WebhookContext) => {
    calls.push({ name, body: ctx.request.body, key: ctx.request.idempotencyKey, query: ctx.request.query });
    if (failNext) {
      failNext = false;
      throw new Error("handler broke");
    }
  };
  b.webhook(
    "gh",
    { verify: { type: "github", secret: SECRET }, idempotencyHeader: "X-GitHub-Delivery" },
    record("gh"),
  );
  b.webhook("signed", { verify: { type: "hmac", secret: HMAC_SECRET } }, record("signed"));
  b.webhook(
    "signed-split",
    {
      verify: {
        type: "hmac",
        secret: HMAC_SECRET,
        header: "x-sig",
        timestampHeader: "x-timestamp",
        toleranceSeconds: 60,
      },
    },
    record("signed-split"),
  );
  b.webhook("slack", { verify: { type: "slack", secret: SLACK_SECRET } }, record("slack"));
  b.webhook("bearer", { verify: { type: "bearer", token: BEARER } }, record("bearer"));
  b.webhook("shared", { verify: { type: "secret", secret: SHARED } }, record("shared"));
  b.webhook("small", { verify: { type: "none" }, maxBodyBytes: 64 }, record("small"));
  b.webhook("tally", { verify: { type: "none" }, idempotencyHeader: "X-Id" }, async (ctx) => {
    const attempts = await ctx.state.immediate.update<number>("tally runs", (n) => (n ?? 0) + 1);
    const count = await ctx.state.update<number>("tally", (n) => (n ?? 0) + 1);
    if (failNext) {
      failNext = false;
      throw new Error("handler broke");
    }
    return { count, attempts };
  });
  b.webhook("ticket", { verify: { type: "none" }, idempotencyHeader: "X-Id" }, async (ctx) => {
    const ticket = await ctx.external("open ticket", () => ({ id: ++tickets }));
    if (failNext) {
      failNext = false;
      throw new Error("handler broke after the ticket");
    }
    return { ticket: ticket.id };
  });
  // Sent only by the status test (its counts are its own).
  b.webhook("counted", { verify: { type: "none" }, maxBodyBytes: 64 }, () => ({ ok: true }));
  b.webhook("counted-signed", { verify: { type: "github", secret: SECRET } }, () => undefined);
  b.webhook("counted-broken", { verify: { type: "none" } }, () => {
    throw new Error("handler broke");
  });
  b.webhook("send", { verify: { type: "none" } }, async (ctx) => {
    const { id } = await ctx.send({
      type: "channel",
      to: "general",
      topic: "hooks",
      content: "from a webhook",
    });
    return { posted: id };
  });
}

beforeAll(async () => {
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  sandbox.control.createUser({
    email: "hooks-bot@sandbox.example",
    full_name: "Hooks",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: ["general"],
  });
  running = await startDaemon(sandbox, {
    hooks: {
      email: "hooks-bot@sandbox.example",
      definition: { setup: hooks } as unknown as BotDefinition<never, never>,
    },
  });
});

afterAll(async () => {
  await running.stop();
  await sandbox.stop();
});

beforeEach(() => {
  calls = [];
  failNext = false;
});

async function post(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await request(`${running.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

const hex = (secret: string, data: string) => createHmac("sha256", secret).update(data).digest("hex");
const now = () => Math.floor(Date.now() / 1000);

describe("ctx.state in a webhook handler", () => {
  it("applies its writes when the handler succeeds: a failed request leaves none, a repeat none", async () => {
    failNext = true;
    const tally = (id: string) => post("/webhooks/hooks/tally", "{}", { "x-id": id });
    expect(await tally("t-1")).toEqual({ status: 500, body: { error: "the webhook handler failed" } });
    expect(await tally("t-1")).toEqual({ status: 200, body: { count: 1, attempts: 2 } });
    expect(await tally("t-1")).toEqual({ status: 200, body: { duplicate: true } });
    expect(await tally("t-2")).toEqual({ status: 200, body: { count: 2, attempts: 3 } });
  });
});

describe("ctx.external in a webhook handler", () => {
  it("is called once per idempotency key (a failed request's retry gets its result), each time without one", async () => {
    const ticket = (headers: Record<string, string>) => post("/webhooks/hooks/ticket", "{}", headers);
    failNext = true;
    expect((await ticket({ "x-id": "k-1" })).status).toBe(500);
    expect(await ticket({ "x-id": "k-1" })).toEqual({ status: 200, body: { ticket: 1 } });
    expect(await ticket({ "x-id": "k-2" })).toEqual({ status: 200, body: { ticket: 2 } });
    expect(await ticket({})).toEqual({ status: 200, body: { ticket: 3 } });
    expect(await ticket({})).toEqual({ status: 200, body: { ticket: 4 } });
    expect(tickets).toBe(4);
  });

  it("takes an empty idempotency header for none: two such requests are two requests", async () => {
    const before = tickets;
    const ticket = () => post("/webhooks/hooks/ticket", "{}", { "x-id": "" });
    expect(await ticket()).toEqual({ status: 200, body: { ticket: before + 1 } });
    expect(await ticket()).toEqual({ status: 200, body: { ticket: before + 2 } });
  });
});

describe("GitHub-style signatures and idempotency keys", () => {
  it("accepts a body signed with X-Hub-Signature-256 and refuses a wrong or missing one", async () => {
    const body = JSON.stringify({ action: "opened", number: 7 });
    const good = { "x-hub-signature-256": `sha256=${hex(SECRET, body)}`, "x-github-delivery": "d-1" };
    expect(await post("/webhooks/hooks/gh", body, good)).toEqual({ status: 200, body: { ok: true } });
    expect(calls).toEqual([{ name: "gh", body: { action: "opened", number: 7 }, key: "d-1", query: {} }]);
    const wrong = { "x-hub-signature-256": `sha256=${hex("other", body)}`, "x-github-delivery": "d-2" };
    expect(await post("/webhooks/hooks/gh", body, wrong)).toEqual({
      status: 401,
      body: { error: "unauthorized: x-hub-signature-256 does not match the body" },
    });
    expect(await post("/webhooks/hooks/gh", body, { "x-github-delivery": "d-3" })).toEqual({
      status: 401,
      body: { error: "unauthorized: missing x-hub-signature-256 header" },
    });
    const tampered = JSON.stringify({ action: "closed", number: 7 });
    expect((await post("/webhooks/hooks/gh", tampered, good)).status).toBe(401);
    expect(calls).toHaveLength(1);
  });

  it("drops a repeat of the same delivery id (200 duplicate) and runs the handler once", async () => {
    const body = JSON.stringify({ action: "synchronize" });
    const headers = { "x-hub-signature-256": `sha256=${hex(SECRET, body)}`, "x-github-delivery": "d-repeat" };
    expect(await post("/webhooks/hooks/gh", body, headers)).toEqual({ status: 200, body: { ok: true } });
    expect(await post("/webhooks/hooks/gh", body, headers)).toEqual({
      status: 200,
      body: { duplicate: true },
    });
    expect(calls).toHaveLength(1);
  });

  it("a failed handler answers 500 and releases the key, so the sender's retry runs it again", async () => {
    const body = JSON.stringify({ action: "retry-me" });
    const headers = { "x-hub-signature-256": `sha256=${hex(SECRET, body)}`, "x-github-delivery": "d-fail" };
    failNext = true;
    expect(await post("/webhooks/hooks/gh", body, headers)).toEqual({
      status: 500,
      body: { error: "the webhook handler failed" },
    });
    expect(await post("/webhooks/hooks/gh", body, headers)).toEqual({ status: 200, body: { ok: true } });
    expect(calls.map((c) => c.key)).toEqual(["d-fail", "d-fail"]);
  });
});

describe("timestamped HMAC (X-Signature: t=…,v1=…)", () => {
  it("accepts a fresh signature, drops its replay, and refuses one outside the window", async () => {
    const body = JSON.stringify({ event: "deploy" });
    const t = now();
    const header = { "x-signature": `t=${t},v1=${hex(HMAC_SECRET, `${t}.${body}`)}` };
    expect(await post("/webhooks/hooks/signed", body, header)).toEqual({ status: 200, body: { ok: true } });
    expect(await post("/webhooks/hooks/signed", body, header)).toEqual({
      status: 200,
      body: { duplicate: true },
    });
    const old = t - 301;
    const stale = { "x-signature": `t=${old},v1=${hex(HMAC_SECRET, `${old}.${body}`)}` };
    expect(await post("/webhooks/hooks/signed", body, stale)).toEqual({
      status: 401,
      body: { error: "unauthorized: timestamp in x-signature (t=…) is outside the 300 s window" },
    });
    const forged = { "x-signature": `t=${t},v1=${hex("wrong", `${t}.${body}`)}` };
    expect((await post("/webhooks/hooks/signed", body, forged)).status).toBe(401);
    expect(calls.map((c) => c.name)).toEqual(["signed"]);
  });

  it("accepts several v1 signatures (key rotation) and a separate timestamp header", async () => {
    const body = JSON.stringify({ event: "rotate" });
    const t = now();
    const rotated = {
      "x-signature": `t=${t},v1=${hex("old-key", `${t}.${body}`)},v1=${hex(HMAC_SECRET, `${t}.${body}`)}`,
    };
    expect((await post("/webhooks/hooks/signed", body, rotated)).status).toBe(200);
    const split = { "x-sig": `v1=${hex(HMAC_SECRET, `${t}.${body}`)}`, "x-timestamp": String(t) };
    expect((await post("/webhooks/hooks/signed-split", body, split)).status).toBe(200);
    const late = { "x-sig": hex(HMAC_SECRET, `${t - 61}.${body}`), "x-timestamp": String(t - 61) };
    expect(await post("/webhooks/hooks/signed-split", body, late)).toEqual({
      status: 401,
      body: { error: "unauthorized: timestamp in x-timestamp is outside the 60 s window" },
    });
    expect(calls.map((c) => c.name)).toEqual(["signed", "signed-split"]);
  });
});

describe("Slack request signing (X-Slack-Signature: v0=…)", () => {
  // A slash command, as Slack sends it: a form, signed over its raw bytes.
  const body = "token=legacy&team_id=T1&command=%2Fdeploy&text=web+now&text=again";
  const form = { "content-type": "application/x-www-form-urlencoded" };
  const signed = (t: number, secret = SLACK_SECRET) => ({
    ...form,
    "x-slack-request-timestamp": String(t),
    "x-slack-signature": `v0=${hex(secret, `v0:${t}:${body}`)}`,
  });
  const slack = (headers: Record<string, string>) => post("/webhooks/hooks/slack", body, headers);
  const refused = (reason: string) => ({ status: 401, body: { error: `unauthorized: ${reason}` } });

  it("hands a signed form to the handler, parsed, and drops its replay within the window", async () => {
    const good = signed(now());
    expect(await slack(good)).toEqual({ status: 200, body: { ok: true } });
    expect(await slack(good)).toEqual({ status: 200, body: { duplicate: true } });
    expect(calls).toEqual([
      {
        name: "slack",
        body: { token: "legacy", team_id: "T1", command: "/deploy", text: ["web now", "again"] },
        key: undefined,
        query: {},
      },
    ]);
  });

  it("refuses a wrong, stale, malformed or missing signature, saying which header and why", async () => {
    const t = now();
    expect(await slack(signed(t, "another-secret"))).toEqual(
      refused("x-slack-signature does not match the body"),
    );
    expect(await slack(signed(t - 301))).toEqual(
      refused("timestamp in x-slack-request-timestamp is outside the 300 s window"),
    );
    const { "x-slack-signature": signature, ...noSignature } = signed(t);
    expect(await slack(noSignature)).toEqual(refused("missing x-slack-signature header"));
    const { "x-slack-request-timestamp": _, ...noTimestamp } = signed(t);
    expect(await slack(noTimestamp)).toEqual(refused("missing x-slack-request-timestamp header"));
    expect(await slack({ ...noSignature, "x-slack-signature": signature.replace("v0=", "v1=") })).toEqual(
      refused("x-slack-signature does not begin with v0= (want v0=<64 hex digits>)"),
    );
    expect(await slack({ ...noSignature, "x-slack-signature": signature.slice(0, -2) })).toEqual(
      refused("x-slack-signature has 62 hex digits after v0=, not 64 (want v0=<64 hex digits>)"),
    );
    const milliseconds = { ...signed(t), "x-slack-request-timestamp": String(t * 1000) };
    expect(await slack(milliseconds)).toEqual(
      refused("timestamp in x-slack-request-timestamp is not whole unix seconds (milliseconds?)"),
    );
    // The signature covers the raw body: the same form, encoded otherwise, is not what was signed.
    const reencoded = await post("/webhooks/hooks/slack", body.replace("web+now", "web%20now"), signed(t));
    expect(reencoded).toEqual(refused("x-slack-signature does not match the body"));
    expect(calls).toEqual([]);
    expect(running.logText()).not.toContain(SLACK_SECRET);
  });
});

describe("bearer tokens and shared secrets", () => {
  it("checks Authorization: Bearer", async () => {
    expect((await post("/webhooks/hooks/bearer", "{}", { authorization: `Bearer ${BEARER}` })).status).toBe(
      200,
    );
    expect(await post("/webhooks/hooks/bearer", "{}", { authorization: "Bearer nope" })).toEqual({
      status: 401,
      body: { error: "unauthorized: wrong bearer token" },
    });
    expect(await post("/webhooks/hooks/bearer", "{}")).toEqual({
      status: 401,
      body: { error: "unauthorized: missing Authorization: Bearer header" },
    });
    expect(calls).toHaveLength(1);
  });

  it("checks a shared secret header, and parses form bodies and query strings", async () => {
    const form = "a=1&b=two&b=three";
    const headers = { "x-webhook-secret": SHARED, "content-type": "application/x-www-form-urlencoded" };
    expect((await post("/webhooks/hooks/shared?source=ci", form, headers)).status).toBe(200);
    expect(calls).toEqual([
      { name: "shared", body: { a: "1", b: ["two", "three"] }, key: undefined, query: { source: "ci" } },
    ]);
    // A form with no fields is still a form: an object, not undefined.
    expect((await post("/webhooks/hooks/shared", "", headers)).status).toBe(200);
    expect(calls[1]).toEqual({ name: "shared", body: {}, key: undefined, query: {} });
    expect(await post("/webhooks/hooks/shared", form, { "x-webhook-secret": "guess" })).toEqual({
      status: 401,
      body: { error: "unauthorized: wrong x-webhook-secret header" },
    });
  });
});

describe("limits, routes and the handler's context", () => {
  it("refuses a body over the webhook's maxBodyBytes with 413, declared or streamed", async () => {
    expect((await post("/webhooks/hooks/small", JSON.stringify({ s: "x".repeat(10) }))).status).toBe(200);
    expect(await post("/webhooks/hooks/small", JSON.stringify({ s: "x".repeat(100) }))).toEqual({
      status: 413,
      body: { error: "request body is larger than 64 bytes" },
    });
    const chunked = await request(`${running.url}/webhooks/hooks/small`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: Readable.from(
        (function* () {
          yield Buffer.from('{"s":"');
          yield Buffer.from("y".repeat(200));
          yield Buffer.from('"}');
        })(),
      ),
    });
    expect(chunked.statusCode).toBe(413);
    await chunked.body.dump();
    expect(calls).toHaveLength(1);
  });

  it("answers 404 for unknown bots and webhooks, 405 for other methods; 400 for bad JSON", async () => {
    expect(await post("/webhooks/nobody/gh", "{}")).toEqual({
      status: 404,
      body: { error: "no webhook at /webhooks/nobody/gh" },
    });
    expect(await post("/webhooks/hooks/nope", "{}")).toEqual({
      status: 404,
      body: { error: "no webhook at /webhooks/hooks/nope" },
    });
    // A path bothost does not serve is 404 whatever its body: not parsed, nor held to the limit.
    const noRoute = (path: string) => ({ status: 404, body: { error: `no route for POST ${path}` } });
    expect(await post("/hooks/nope", "{not json")).toEqual(noRoute("/hooks/nope"));
    expect(await post("/healthz", "{not json")).toEqual(noRoute("/healthz"));
    expect(await post("/hooks/nope", Buffer.alloc(2 * 1024 * 1024, 32))).toEqual(noRoute("/hooks/nope"));
    const get = await request(`${running.url}/webhooks/hooks/gh`);
    expect(get.statusCode).toBe(405);
    expect(get.headers.allow).toBe("POST");
    expect(await get.body.json()).toEqual({ error: "a webhook takes POST requests, not GET" });
    const getUnknown = await request(`${running.url}/webhooks/hooks/nope`);
    expect(getUnknown.statusCode).toBe(404);
    expect(await getUnknown.body.json()).toEqual({ error: "no webhook at /webhooks/hooks/nope" });
    const put = await request(`${running.url}/webhooks/hooks/gh`, { method: "PUT", body: "{}" });
    expect(put.statusCode).toBe(405);
    await put.body.dump();
    expect(await post("/webhooks/hooks/small", "{not json")).toEqual({
      status: 400,
      body: { error: "the body is not valid JSON" },
    });
    // No JSON text is empty: an empty body declared as JSON is refused too, one of no type is not.
    expect(await post("/webhooks/hooks/small", "")).toEqual({
      status: 400,
      body: { error: "the body is not valid JSON" },
    });
    expect(calls).toEqual([]);
    expect(await post("/webhooks/hooks/small", "", { "content-type": "text/plain" })).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(calls).toEqual([{ name: "small", body: undefined, key: undefined, query: {} }]);
  });

  it("gives the handler the bot's api (ctx.send) and returns its plain-object result", async () => {
    const res = await post("/webhooks/hooks/send", "{}");
    expect(res.status).toBe(200);
    const posted = sandbox.control.messages().find((m) => m.id === res.body.posted);
    expect(posted).toMatchObject({ content: "from a webhook", topic: "hooks" });
  });

  it("never writes a secret, signature or token to the log", async () => {
    const body = "{}";
    const t = now();
    await post("/webhooks/hooks/signed", body, {
      "x-signature": `t=${t},v1=${hex(HMAC_SECRET, `${t}.${body}`)}`,
    });
    await post("/webhooks/hooks/bearer?token=query-secret-1", body, { authorization: `Bearer ${BEARER}` });
    const text = running.logText();
    for (const secret of [
      SECRET,
      HMAC_SECRET,
      BEARER,
      SHARED,
      "query-secret-1",
      hex(HMAC_SECRET, `${t}.${body}`),
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(
      running.logs.find((l) => l.msg === "http request" && l.path === "/webhooks/hooks/bearer"),
    ).toMatchObject({
      method: "POST",
      route: "/webhooks/:bot/:name",
      status: 200,
    });
  });
});

describe("bothost status", () => {
  const send = async (name: string, body = "{}", method: "POST" | "GET" = "POST") => {
    const res = await request(`${running.url}/webhooks/hooks/${name}`, {
      method,
      headers: { "content-type": "application/json", "x-hub-signature-256": "sha256=00" },
      ...(method === "POST" ? { body } : {}),
    });
    await res.body.dump();
    return res.statusCode;
  };

  it("counts each webhook's requests by their answer; one sent nothing is not listed", async () => {
    expect((await running.daemon.status()).bots[0]?.webhooks?.counted).toBeUndefined();
    expect(await send("counted")).toBe(200);
    expect(await send("counted")).toBe(200);
    expect(await send("counted", "x".repeat(200))).toBe(413);
    expect(await send("counted", "{}", "GET")).toBe(405);
    expect(await send("counted-signed")).toBe(401);
    expect(await send("counted-broken")).toBe(500);
    const status = await running.daemon.status();
    const at = expect.any(String);
    expect(status.bots[0]?.webhooks).toMatchObject({
      counted: { requests: 4, ok: 2, refused: 2, failed: 0, unavailable: 0, lastAt: at },
      "counted-signed": { requests: 1, ok: 0, refused: 1, failed: 0, unavailable: 0, lastAt: at },
      "counted-broken": { requests: 1, ok: 0, refused: 0, failed: 1, unavailable: 0, lastAt: at },
    });
    const text = formatStatus(status);
    expect(text).toMatch(
      /^hooks: webhook counted: 4 requests \(2 ok, 2 refused, 0 failed, 0 unavailable\), last \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m,
    );
    expect(text).toMatch(
      /^hooks: webhook counted-broken: 1 request \(0 ok, 0 refused, 1 failed, 0 unavailable\)/m,
    );
    expect(text).not.toContain(SECRET);
  });
});
