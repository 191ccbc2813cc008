import { BOT, basicAuth, Caller, expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";

const UNAUTHORIZED = "Not logged in: API authentication or user session required";

test("success bodies put result and msg first and end with a newline", async ({ sb }) => {
  const reply = await sb.anon.get("/server_settings");
  expect(reply.status).toBe(200);
  expect(reply.text.startsWith('{"result":"success","msg":""')).toBe(true);
  expect(reply.text.endsWith("}\n")).toBe(true);
  expect(reply.body.zulip_feature_level).toBe(496);
  expect(reply.body.realm_url).toBe(sb.sandbox.url);
});

test("no Authorization header is 401 UNAUTHORIZED with a Basic challenge", async ({ sb }) => {
  const reply = await sb.anon.get("/users/me");
  expect(reply.status).toBe(401);
  expect(reply.body).toEqual({ result: "error", msg: UNAUTHORIZED, code: "UNAUTHORIZED" });
  expect(reply.headers["www-authenticate"]).toBe('Basic realm="zulip"');
});

test("a non-basic auth type is 400", async ({ sb }) => {
  const reply = await new Caller(sb.sandbox.url, { authorization: "Bearer abc" }).get("/users/me");
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual({
    result: "error",
    msg: "This endpoint requires HTTP basic authentication.",
    code: "BAD_REQUEST",
  });
});

test.for([
  ["an empty header", "", "Invalid authorization header for basic auth"],
  ["a type alone", "Bearer", "Invalid authorization header for basic auth"],
  ["three words", "Digest a b", "Invalid authorization header for basic auth"],
  ["bad base64", "Basic %%%", "Invalid authorization header for basic auth"],
  [
    "no colon",
    `Basic ${Buffer.from("just-an-email").toString("base64")}`,
    "Invalid authorization header for basic auth",
  ],
  ["malformed key", basicAuth(BOT, "short"), "Malformed API key"],
  ["wrong key", basicAuth(BOT, "a".repeat(32)), "Invalid API key"],
  ["unknown email", basicAuth("nobody@sandbox.example", "a".repeat(32)), "Invalid API key"],
] as const)("%s is 401 UNAUTHORIZED", async ([, header, msg], { sb }) => {
  const reply = await new Caller(sb.sandbox.url, { authorization: header }).get("/users/me");
  expect(reply.status).toBe(401);
  expect(reply.body).toEqual({ result: "error", msg, code: "UNAUTHORIZED" });
  expect(reply.headers["www-authenticate"]).toBe('Basic realm="zulip"');
});

test("email is matched case-insensitively and trimmed", async ({ sb }) => {
  const key = sb.sandbox.control.apiKeyOf(BOT);
  const reply = await new Caller(sb.sandbox.url, {
    authorization: basicAuth(" BOT@Sandbox.example ", key),
  }).get("/users/me");
  expect(reply.status).toBe(200);
  expect(reply.body.email).toBe(BOT);
});

test("a deactivated account is 401 Account is deactivated", async ({ sb }) => {
  const caller = sb.as(MEMBER);
  sb.sandbox.control.setActive(MEMBER, false);
  const reply = await caller.get("/users/me");
  expect(reply.status).toBe(401);
  expect(reply.body).toEqual({ result: "error", msg: "Account is deactivated", code: "UNAUTHORIZED" });
});

test("an unsupported method is 405 with allowed_methods and no code", async ({ sb }) => {
  const reply = await sb.as(BOT).send("PUT", "/register");
  expect(reply.status).toBe(405);
  expect(reply.body).toEqual({ result: "error", msg: "Method Not Allowed", allowed_methods: ["POST"] });
  expect(reply.headers.allow).toBe("POST");
});

test("405 comes before authentication", async ({ sb }) => {
  const reply = await sb.anon.send("PATCH", "/events");
  expect(reply.status).toBe(405);
  expect(reply.body.allowed_methods).toEqual(["GET", "DELETE"]);
});

test("ignored parameters are reported sorted on success only", async ({ sb }) => {
  const ok = await sb.as(BOT).get("/users/me", { zebra: "1", alpha: "2" });
  expect(ok.body.ignored_parameters_unsupported).toEqual(["alpha", "zebra"]);
  const err = await sb.as(BOT).post("/messages", { type: "stream", to: "general", zebra: "1" });
  expect(err.status).toBe(400);
  expect(err.body.ignored_parameters_unsupported).toBeUndefined();
});

test("the client parameter counts as consumed", async ({ sb }) => {
  const reply = await sb.as(BOT).get("/users/me", { client: "MyBot" });
  expect(reply.body.ignored_parameters_unsupported).toBeUndefined();
});

test("a missing required parameter is REQUEST_VARIABLE_MISSING with var_name", async ({ sb }) => {
  const reply = await sb.as(BOT).post("/messages", { type: "stream", to: "general", topic: "t" });
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual({
    result: "error",
    msg: "Missing 'content' argument",
    code: "REQUEST_VARIABLE_MISSING",
    var_name: "content",
  });
});

test("topic and subject together are REQUEST_CONFUSING_VAR", async ({ sb }) => {
  const reply = await sb.as(BOT).post("/messages", {
    type: "stream",
    to: "general",
    topic: "a",
    subject: "b",
    content: "x",
  });
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual({
    result: "error",
    msg: "Can't decide between 'topic' and 'subject' arguments",
    code: "REQUEST_CONFUSING_VAR",
    var_name1: "topic",
    var_name2: "subject",
  });
});

test("Json parameters are parsed strictly", async ({ sb }) => {
  const bot = sb.as(BOT);
  const notJson = await bot.post("/messages", {
    type: "stream",
    to: "general",
    topic: "t",
    content: "x",
    read_by_sender: "True",
  });
  expect(notJson.body).toEqual({
    result: "error",
    msg: "read_by_sender is not valid JSON",
    code: "BAD_REQUEST",
  });
  const notBool = await bot.post("/messages", {
    type: "stream",
    to: "general",
    topic: "t",
    content: "x",
    read_by_sender: "1",
  });
  expect(notBool.body).toEqual({
    result: "error",
    msg: "read_by_sender is not a boolean",
    code: "BAD_REQUEST",
  });
  const notInt = await bot.get("/messages", { anchor: "newest", num_before: "1.5", num_after: 0 });
  expect(notInt.body).toEqual({ result: "error", msg: "num_before is not an integer", code: "BAD_REQUEST" });
});

test("a Json[int] is a JSON integer literal, strictly: a whole float or a boolean is not an integer", async ({
  sb,
}) => {
  const bot = sb.as(BOT);
  const notInteger = (name: string) => ({
    result: "error",
    msg: `${name} is not an integer`,
    code: "BAD_REQUEST",
  });
  for (const value of ["1.0", "1e3", "1E+0", "true"]) {
    const reply = await bot.get("/messages", { anchor: "newest", num_before: value, num_after: 0 });
    expect([value, reply.status, reply.body]).toEqual([value, 400, notInteger("num_before")]);
  }
  // JSON allows whitespace around a value and -0 is an integer literal (read as 0).
  for (const value of [" 1", "1\n", "-0"]) {
    const reply = await bot.get("/messages", { anchor: "newest", num_before: 0, num_after: value });
    expect([value, reply.status]).toEqual([value, 200]);
  }
  const listItem = await bot.get("/messages", { message_ids: "[1, 2.0]" });
  expect(listItem.body).toEqual(notInteger("message_ids[1]"));
  const moved = await bot.patch("/messages/1", { stream_id: "1.0" });
  expect(moved.body).toEqual(notInteger("stream_id"));
});

test("PATCH /messages/{id} checks its parameters in the server's order", async ({ sb }) => {
  const bot = sb.as(BOT);
  const sent = await bot.post("/messages", { type: "stream", to: "general", topic: "t", content: "x" });
  const edit = (form: Record<string, string>) => bot.patch(`/messages/${sent.body.id}`, form);
  const msg = async (form: Record<string, string>) => (await edit(form)).body.msg;
  expect(await msg({ stream_id: "x", propagate_mode: "all" })).toBe("Invalid propagate_mode");
  expect(await msg({ send_notification_to_old_thread: "1", send_notification_to_new_thread: "1" })).toBe(
    "send_notification_to_new_thread is not a boolean",
  );
  expect(await msg({ stream_id: "x", send_notification_to_old_thread: "1" })).toBe(
    "send_notification_to_old_thread is not a boolean",
  );
});

test("query parameters also work on POST", async ({ sb }) => {
  const reply = await sb
    .as(BOT)
    .send("POST", "/messages", {}, { type: "stream", to: "general", topic: "q", content: "via query" });
  expect(reply.status).toBe(200);
  expect(typeof reply.body.id).toBe("number");
});

test("a POST method field overrides the HTTP method", async ({ sb }) => {
  const reply = await sb.as(BOT).post("/users/me/subscriptions", { method: "GET" });
  expect(reply.status).toBe(200);
  expect(reply.body.subscriptions.map((s: { name: string }) => s.name)).toEqual(["general"]);
});

test("OPTIONS answers 204 with Allow", async ({ sb }) => {
  const reply = await sb.anon.send("OPTIONS", "/messages");
  expect(reply.status).toBe(204);
  expect(reply.headers.allow).toBe("GET, POST");
});

test("an unknown API path is 404", async ({ sb }) => {
  const reply = await sb.as(OWNER).get("/no/such/endpoint");
  expect(reply.status).toBe(404);
});

test("incoming-webhook bots may only send messages", async ({ sb }) => {
  const hook = sb.sandbox.control.createUser({
    email: "hook-bot@sandbox.example",
    full_name: "Hook",
    bot: "incoming",
    owner: OWNER,
  });
  const caller = sb.as(hook.email);
  const me = await caller.get("/users/me");
  expect(me.status).toBe(401);
  expect(me.body).toEqual({
    result: "error",
    msg: "This API is not available to incoming webhook bots.",
    code: "UNAUTHORIZED",
  });
  const sent = await caller.post("/messages", { type: "stream", to: "general", topic: "t", content: "hi" });
  expect(sent.status).toBe(200);
});
