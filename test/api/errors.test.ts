import { describe, expect } from "vitest";
import type { Client } from "../../src/api/create-client.ts";
import {
  ApiError,
  AuthError,
  BadResponseError,
  isApiError,
  isAuthError,
  ResponseSchemaError,
} from "../../src/api/errors.ts";
import { BothostError } from "../../src/errors/bothost-error.ts";
import { API_KEY, EMAIL, test } from "../support/api/client-fixture.ts";
import * as rec from "../support/api/records.ts";
import { failure, success } from "../support/api/test-server.ts";

interface ErrorRow {
  name: string;
  call: (c: Client) => Promise<unknown>;
  endpoint: string;
  status: number;
  body: Record<string, unknown>;
  code: string;
  data?: Record<string, unknown>;
}

const bad = (msg: string) => ({ msg, code: "BAD_REQUEST" });

// The seed's Errors table, with the statuses the server answers with, plus rows for other errors
// the server makes (docs/internals/server-behaviour.md#errors).
const rows: ErrorRow[] = [
  {
    name: "scheduled message to a channel that does not exist",
    call: (c) =>
      c.scheduledMessages.create({
        type: "channel",
        to: 99,
        topic: "t",
        content: "c",
        scheduled_delivery_timestamp: 1,
      }),
    endpoint: "POST /scheduled_messages",
    status: 400,
    body: { msg: "Channel with ID '99' does not exist", code: "STREAM_DOES_NOT_EXIST", stream_id: 99 },
    code: "STREAM_DOES_NOT_EXIST",
    data: { stream_id: 99 },
  },
  {
    name: "scheduled message to an invalid user id",
    call: (c) =>
      c.scheduledMessages.create({ type: "direct", to: [10], content: "c", scheduled_delivery_timestamp: 1 }),
    endpoint: "POST /scheduled_messages",
    status: 400,
    body: bad("Invalid user ID 10"),
    code: "BAD_REQUEST",
  },
  {
    name: "channel typing without stream_id",
    call: (c) => c.typing.set({ op: "start", type: "channel", topic: "t" }),
    endpoint: "POST /typing",
    status: 400,
    body: bad("Missing 'stream_id' argument"),
    code: "BAD_REQUEST",
  },
  {
    name: "channel folder by a non-administrator",
    call: (c) => c.channelFolders.create({ name: "F" }),
    endpoint: "POST /channel_folders/create",
    status: 400,
    body: { msg: "Must be an organization administrator", code: "UNAUTHORIZED_PRINCIPAL" },
    code: "UNAUTHORIZED_PRINCIPAL",
  },
  {
    name: "report without a moderation request channel",
    call: (c) => c.messages.report(5, { report_type: "spam" }),
    endpoint: "POST /messages/5/report",
    status: 400,
    body: bad("Message reporting is not enabled in this organization."),
    code: "BAD_REQUEST",
  },
  {
    name: "history of a message that does not exist",
    call: (c) => c.messages.history(404),
    endpoint: "GET /messages/404/history",
    status: 400,
    body: bad("Invalid message(s)"),
    code: "BAD_REQUEST",
  },
  {
    name: "profile data when editing is restricted",
    call: (c) => c.users.updateProfileData({ data: [{ id: 3, value: "x" }] }),
    endpoint: "PATCH /users/me/profile_data",
    status: 400,
    body: bad("You are not allowed to change this field. Contact an administrator to update it."),
    code: "BAD_REQUEST",
  },
  {
    name: "profile data for a field that does not exist",
    call: (c) => c.users.updateProfileData({ data: [{ id: 999, value: "x" }] }),
    endpoint: "PATCH /users/me/profile_data",
    status: 400,
    body: bad("Field id 999 not found."),
    code: "BAD_REQUEST",
  },
  {
    name: "topics of an inaccessible channel",
    call: (c) => c.channels.topics(77),
    endpoint: "GET /users/me/77/topics",
    status: 400,
    body: bad("Invalid channel ID"),
    code: "BAD_REQUEST",
  },
  {
    name: "saved snippet with an empty title",
    call: (c) => c.savedSnippets.create({ title: "", content: "c" }),
    endpoint: "POST /saved_snippets",
    status: 400,
    body: bad("title cannot be blank"),
    code: "BAD_REQUEST",
  },
  {
    name: "android token of invalid length",
    call: (c) => c.pushTokens.removeAndroid({ token: "" }),
    endpoint: "DELETE /users/me/android_gcm_reg_id",
    status: 400,
    body: bad("Empty or invalid length token"),
    code: "BAD_REQUEST",
  },
  {
    name: "apns token that does not exist",
    call: (c) => c.pushTokens.removeApns({ token: "nope" }),
    endpoint: "DELETE /users/me/apns_device_token",
    status: 400,
    body: bad("Token does not exist"),
    code: "BAD_REQUEST",
  },
  {
    name: "android token that does not exist",
    call: (c) => c.pushTokens.removeAndroid({ token: "nope" }),
    endpoint: "DELETE /users/me/android_gcm_reg_id",
    status: 400,
    body: bad("Token does not exist"),
    code: "BAD_REQUEST",
  },
  {
    name: "apns token of invalid length",
    call: (c) => c.pushTokens.removeApns({ token: "" }),
    endpoint: "DELETE /users/me/apns_device_token",
    status: 400,
    body: bad("Empty or invalid length token"),
    code: "BAD_REQUEST",
  },
  {
    name: "missing scheduled message (404, code BAD_REQUEST)",
    call: (c) => c.scheduledMessages.delete(9),
    endpoint: "DELETE /scheduled_messages/9",
    status: 404,
    body: bad("Scheduled message does not exist"),
    code: "BAD_REQUEST",
  },
  {
    name: "missing saved snippet (404, code BAD_REQUEST)",
    call: (c) => c.savedSnippets.update(3, { title: "x" }),
    endpoint: "PATCH /saved_snippets/3",
    status: 404,
    body: bad("Saved snippet does not exist."),
    code: "BAD_REQUEST",
  },
  {
    name: "expired event queue",
    call: (c) => c.events.get({ queue_id: "q9", last_event_id: 3 }),
    endpoint: "GET /events",
    status: 400,
    body: { msg: "Bad event queue ID: q9", code: "BAD_EVENT_QUEUE_ID", queue_id: "q9" },
    code: "BAD_EVENT_QUEUE_ID",
    data: { queue_id: "q9" },
  },
  {
    name: "missing argument",
    call: (c) => c.request("POST", "/messages", { type: "direct", to: "[1]" }),
    endpoint: "POST /messages",
    status: 400,
    body: { msg: "Missing 'content' argument", code: "REQUEST_VARIABLE_MISSING", var_name: "content" },
    code: "REQUEST_VARIABLE_MISSING",
    data: { var_name: "content" },
  },
  {
    name: "access denied (403)",
    call: (c) => c.realm.addDomain({ domain: "x.org", allow_subdomains: false }),
    endpoint: "POST /realm/domains",
    status: 403,
    body: bad("Access denied"),
    code: "BAD_REQUEST",
  },
  {
    name: "method not allowed (405, no code)",
    call: (c) => c.request("PUT", "/messages"),
    endpoint: "PUT /messages",
    status: 405,
    body: { msg: "Method Not Allowed", allowed_methods: ["GET", "POST"] },
    code: "HTTP_405",
    data: { allowed_methods: ["GET", "POST"] },
  },
  {
    name: "internal server error on a call that is not retried (500, no code)",
    call: (c) => c.messages.send({ type: "channel", to: 5, topic: "t", content: "c" }),
    endpoint: "POST /messages",
    status: 500,
    body: { msg: "Internal server error" },
    code: "HTTP_500",
  },
];

describe("server errors become ApiError", () => {
  test.for(rows)("$name", async (row, { server, makeClient }) => {
    server.fallback = failure(row.status, row.body);
    const err = await row.call(makeClient({ retry: {} })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toBeInstanceOf(BothostError);
    expect(isApiError(err)).toBe(true);
    const apiError = err as ApiError;
    expect(apiError.name).toBe("ApiError");
    expect(apiError.code).toBe(row.code);
    expect(apiError.status).toBe(row.status);
    expect(apiError.endpoint).toBe(row.endpoint);
    expect(apiError.msg).toBe(row.body.msg);
    expect(apiError.data).toEqual(row.data ?? {});
    expect(apiError.message).toContain(`${row.endpoint} failed: ${row.status} ${row.code}: ${row.body.msg}`);
    // Client errors (4xx) and a 500 on a non-idempotent call are never retried.
    expect(server.requests).toHaveLength(1);
  });

  test("the message says how to fix a known code", async ({ server, makeClient }) => {
    server.reply(failure(400, { msg: "Bad event queue ID: q9", code: "BAD_EVENT_QUEUE_ID", queue_id: "q9" }));
    const err = await makeClient()
      .events.get({ queue_id: "q9", last_event_id: 3 })
      .catch((e: unknown) => e);
    expect((err as Error).message).toMatchInlineSnapshot(
      `"GET /events failed: 400 BAD_EVENT_QUEUE_ID: Bad event queue ID: q9. The event queue expired or was deleted; register a new one with events.register()."`,
    );
  });

  test("a malformed JSON body's hint is about the body, not a parameter", async ({ server, makeClient }) => {
    server.reply(failure(400, { msg: "Malformed JSON", code: "INVALID_JSON" }));
    const err = await makeClient()
      .request("POST", "/external/github", { payload: "{" })
      .catch((e: unknown) => e);
    expect((err as Error).message).toMatchInlineSnapshot(
      `"POST /external/github failed: 400 INVALID_JSON: Malformed JSON. The request's whole body must be valid JSON (an incoming webhook's payload); with request(), pass a parameter's arrays and objects as values, not strings."`,
    );
  });

  test("the server's text ends its sentence before the hint", async ({ server, makeClient }) => {
    server.reply(failure(400, { msg: "Channel 'mod-logs' does not exist", code: "STREAM_DOES_NOT_EXIST" }));
    const err = await makeClient()
      .messages.send({ type: "channel", to: "mod-logs", topic: "t", content: "c" })
      .catch((e: unknown) => e);
    expect((err as Error).message).toMatchInlineSnapshot(
      `"POST /messages failed: 400 STREAM_DOES_NOT_EXIST: Channel 'mod-logs' does not exist. Check the channel id or name, and that the bot can see the channel."`,
    );
  });
});

describe("401 is always AuthError, never retried", () => {
  const variants = [
    { msg: "Invalid API key", code: "UNAUTHORIZED" },
    { msg: "Account is deactivated", code: "UNAUTHORIZED" },
    { msg: "This organization has been deactivated", code: "REALM_DEACTIVATED" },
    { msg: "Invalid API key", code: "INVALID_API_KEY" },
  ];
  test.for(variants)("401 $code: $msg", async (body, { server, makeClient }) => {
    server.fallback = failure(401, body, { "www-authenticate": 'Basic realm="zulip"' });
    const err = await makeClient({ retry: { maxAttempts: 5 } })
      .users.me()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthError);
    expect(isAuthError(err)).toBe(true);
    const auth = err as AuthError;
    expect(auth.name).toBe("AuthError");
    expect(auth.status).toBe(401);
    expect(auth.code).toBe(body.code);
    expect(auth.email).toBe(EMAIL);
    expect(server.requests).toHaveLength(1);
  });

  test("the message names the email and how to fix it", async ({ server, makeClient }) => {
    server.reply(failure(401, { msg: "Invalid API key", code: "UNAUTHORIZED" }));
    const err = await makeClient()
      .messages.send({ type: "direct", to: [1], content: "x" })
      .catch((e: unknown) => e);
    expect((err as Error).message.replace(server.url, "<server>")).toMatchInlineSnapshot(
      `"POST /messages: the server at <server> rejected the credentials of bot@chat.example.org (401 UNAUTHORIZED: Invalid API key). The email or API key is wrong, or the account or organization is deactivated. Download a fresh zuliprc for this bot (Settings → Bots) or fix the email and API key in its configuration, and check that the bot is still active."`,
    );
  });

  test("a 401 with a non-JSON body (a proxy) is an AuthError too", async ({ server, makeClient }) => {
    server.reply({ status: 401, raw: "<html>Unauthorized</html>" });
    const err = await makeClient()
      .users.me()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthError);
    expect((err as AuthError).code).toBe("HTTP_401");
    expect(server.requests).toHaveLength(1);
  });
});

describe("bodies that are not the API", () => {
  test("a non-JSON 502 is a BadResponseError with status, content type and the start of the body", async ({
    server,
    makeClient,
  }) => {
    const page = `<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center>${"x".repeat(200)}</body></html>`;
    server.fallback = { status: 502, raw: page };
    const err = await makeClient({ retry: false })
      .users.me()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadResponseError);
    expect((err as BadResponseError).code).toBe("BAD_RESPONSE");
    expect((err as BadResponseError).status).toBe(502);
    expect((err as Error).message).toMatchInlineSnapshot(
      `"GET /users/me: the server answered 502 with a non-JSON body (content-type text/html): "<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center>xxx…". The server or a proxy in front of it is failing, or the URL does not point at the chat server; safe calls are retried, so if this persists check the server's and the proxy's logs."`,
    );
  });

  test("a non-JSON page that echoes the request's credentials quotes none of them", async ({
    server,
    makeClient,
  }) => {
    // A proxy's error page showing the request's headers; the quoted start ends inside them.
    const credentials = Buffer.from(`${EMAIL}:${API_KEY}`).toString("base64");
    server.fallback = { status: 502, raw: `<pre>Bad gateway. Authorization: Basic ${credentials}</pre>` };
    const err = await makeClient({ retry: false })
      .users.me()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadResponseError);
    const message = (err as Error).message;
    expect(message).toContain("Authorization: Basic [redacted]");
    expect(message).not.toContain(credentials.slice(0, 16));
  });

  test("a success body of the wrong shape names the endpoint and the field", async ({
    server,
    makeClient,
  }) => {
    const { user_id: _, ...withoutId } = rec.ownUser;
    server.reply(success({ ...withoutId, role: "member" }));
    const err = await makeClient()
      .users.me()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseSchemaError);
    const schemaError = err as ResponseSchemaError;
    expect(schemaError.code).toBe("UNEXPECTED_RESPONSE");
    expect(schemaError.message).toContain(
      "GET /users/me: the server's response does not have the expected shape:",
    );
    expect(schemaError.issues.some((i) => i.startsWith("role:"))).toBe(true);
    expect(schemaError.issues.some((i) => i.startsWith("user_id:"))).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  test("unknown fields pass through validation", async ({ server, makeClient }) => {
    server.reply(success({ ...rec.ownUser, some_future_field: [1] }));
    const me = await makeClient().users.me();
    expect(me).toMatchObject({ user_id: 30, some_future_field: [1] });
  });

  test("request() without a schema returns the raw body minus result and msg", async ({
    server,
    makeClient,
  }) => {
    server.reply(success({ alert_words: ["x"] }));
    const data = await makeClient().request("GET", "/users/me/alert_words");
    expect(data).toEqual({ alert_words: ["x"] });
  });
});
