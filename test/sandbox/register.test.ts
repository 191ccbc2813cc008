import { BOT, expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";

const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test("register returns a UUID4 queue id, version fields and last_event_id -1", async ({ sb }) => {
  const body = await sb.as(BOT).register({ event_types: ["message"], fetch_event_types: [] });
  expect(body.queue_id).toMatch(UUID4);
  expect(body.last_event_id).toBe(-1);
  expect(body.zulip_feature_level).toBe(496);
  expect(typeof body.zulip_version).toBe("string");
  expect(body.zulip_merge_base).toBe("");
  expect(body.user_id).toBeUndefined();
  expect(body.max_message_length).toBeUndefined();
});

test("realm fields come only with realm in the fetch set", async ({ sb }) => {
  const body = await sb.as(BOT).register({ fetch_event_types: ["realm"] });
  expect(body).toMatchObject({
    max_message_length: 10000,
    max_topic_length: 60,
    event_queue_longpoll_timeout_seconds: 90,
    server_typing_started_expiry_period_milliseconds: 45000,
    server_typing_stopped_wait_period_milliseconds: 12000,
    server_typing_started_wait_period_milliseconds: 30000,
    realm_empty_topic_display_name: "general chat",
    realm_url: sb.sandbox.url,
  });
  expect(body.server_report_message_types.map((t: { key: string }) => t.key)).toEqual([
    "spam",
    "harassment",
    "inappropriate",
    "norms",
    "other",
  ]);
  expect(body.realm_moderation_request_channel_id).toBeGreaterThan(0);
  expect(body.user_id).toBeUndefined();
  expect(body.realm_users).toBeUndefined();
});

test("own user fields come only with realm_user", async ({ sb }) => {
  const body = await sb.as(BOT).register({ fetch_event_types: ["realm_user"] });
  const me = sb.sandbox.control.users().find((u) => u.email === BOT)!;
  expect(body).toMatchObject({ user_id: me.user_id, email: BOT, full_name: "Sandbox Bot", is_admin: false });
  expect(
    body.realm_users.some((u: { user_id: number; is_active?: boolean }) => u.user_id === me.user_id),
  ).toBe(true);
  expect(body.realm_users.every((u: Record<string, unknown>) => !("is_active" in u))).toBe(true);
  expect(body.cross_realm_bots[0].email).toBe("notification-bot@zulip.com");
  expect(body.max_message_length).toBeUndefined();
});

test("fetch_event_types falls back to event_types, then to everything", async ({ sb }) => {
  const narrow = await sb.as(BOT).register({ event_types: ["realm_user"] });
  expect(narrow.user_id).toBeDefined();
  expect(narrow.max_message_length).toBeUndefined();
  const all = await sb.as(BOT).register();
  expect(all.user_id).toBeDefined();
  expect(all.max_message_length).toBe(10000);
  expect(all.subscriptions.map((s: { name: string }) => s.name)).toEqual(["general"]);
});

test("null event_types means every type, as the server's Json[list[str]] | None", async ({ sb }) => {
  const body = await sb.as(BOT).register({ event_types: null, fetch_event_types: ["realm_user"] });
  const queue = sb.sandbox.control.queues().find((q) => q.queue_id === body.queue_id)!;
  expect(queue.event_types).toBeNull();
});

test("client_capabilities must include notification_settings_null", async ({ sb }) => {
  const reply = await sb.as(BOT).post("/register", { client_capabilities: { bulk_message_deletion: true } });
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual({
    result: "error",
    msg: 'client_capabilities["notification_settings_null"] field is missing: Field required',
    code: "BAD_REQUEST",
  });
});

test("a capability that is not a boolean is rejected", async ({ sb }) => {
  const reply = await sb.as(BOT).post("/register", {
    client_capabilities: { notification_settings_null: true, empty_topic_name: "yes" },
  });
  expect(reply.body.msg).toBe('client_capabilities["empty_topic_name"] is not a boolean');
});

test("narrow operators other than channel/stream/topic/sender/is are rejected", async ({ sb }) => {
  const reply = await sb.as(BOT).post("/register", { narrow: [["search", "x"]] });
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual({ result: "error", msg: "Operator search not supported.", code: "BAD_REQUEST" });
  const shape = await sb.as(BOT).post("/register", { narrow: [["stream"]] });
  expect(shape.body.msg).toBe("Invalid narrow[0]");
  const ok = await sb.as(BOT).post("/register", { narrow: [["stream", "general"]] });
  expect(ok.status).toBe(200);
});

test("event_types must be a JSON list of strings", async ({ sb }) => {
  const reply = await sb.as(BOT).post("/register", { event_types: "message" });
  expect(reply.body).toEqual({ result: "error", msg: "event_types is not valid JSON", code: "BAD_REQUEST" });
  const wrong = await sb.as(BOT).post("/register", { event_types: [1] });
  expect(wrong.body.msg).toBe("event_types[0] is not a string");
});

test("include_subscribers is a plain string literal", async ({ sb }) => {
  const ok = await sb
    .as(OWNER)
    .register({ fetch_event_types: ["subscription"], include_subscribers: "true" });
  expect(ok.subscriptions[0].subscribers.length).toBeGreaterThan(0);
  const bad = await sb.as(OWNER).post("/register", { include_subscribers: "yes" });
  expect(bad.body.msg).toBe("Invalid include_subscribers");
});

test("all_public_streams is refused to guests", async ({ sb }) => {
  sb.sandbox.control.createUser({ email: "guest@sandbox.example", full_name: "Gus Guest", role: "guest" });
  const reply = await sb.as("guest@sandbox.example").post("/register", { all_public_streams: true });
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual({
    result: "error",
    msg: "User not authorized for this query",
    code: "BAD_REQUEST",
  });
});

test("gated sections: scheduled_messages, saved_snippets, user_settings, unread_msgs", async ({ sb }) => {
  const body = await sb.as(MEMBER).register({
    fetch_event_types: [
      "scheduled_messages",
      "saved_snippets",
      "user_settings",
      "message",
      "update_message_flags",
    ],
  });
  expect(body.scheduled_messages).toEqual([]);
  expect(body.saved_snippets).toEqual([]);
  expect(body.user_settings.receives_typing_notifications).toBe(true);
  expect(body.unread_msgs.count).toBe(0);
  expect(body.max_message_id).toBe(-1);
  expect(body.subscriptions).toBeUndefined();
});
