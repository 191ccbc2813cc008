import { openQueue } from "../support/sandbox/events.ts";
import { BOT, expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";

const STREAM_TYPING = { notification_settings_null: true, stream_typing_notifications: true };

test("direct typing reaches every recipient with the setting on, the sender included", async ({ sb }) => {
  const c = sb.sandbox.control;
  const quiet = c.createUser({
    email: "quiet@sandbox.example",
    full_name: "Quiet",
    settings: { receives_typing_notifications: false },
  });
  const member = await openQueue(sb.as(MEMBER), { event_types: ["typing"] });
  const bot = await openQueue(sb.as(BOT), { event_types: ["typing"] });
  const silent = await openQueue(sb.as(quiet.email), { event_types: ["typing"] });
  const ids = Object.fromEntries(c.users().map((u) => [u.email, u.user_id]));
  const reply = await sb.as(BOT).post("/typing", { op: "start", to: [ids[MEMBER], quiet.user_id] });
  expect(reply.body).toEqual({ result: "success", msg: "" });
  const expected = {
    type: "typing",
    op: "start",
    message_type: "direct",
    sender: { user_id: ids[BOT], email: BOT },
    recipients: [
      { user_id: ids[MEMBER], email: MEMBER },
      { user_id: ids[BOT], email: BOT },
      { user_id: quiet.user_id, email: quiet.email },
    ],
    id: 0,
  };
  expect(await member.peek()).toEqual([expected]);
  expect(await bot.peek()).toEqual([expected]);
  expect(await silent.peek()).toEqual([]);
});

test("channel typing goes only to queues with stream_typing_notifications", async ({ sb }) => {
  const capable = await openQueue(sb.as(MEMBER), {
    event_types: ["typing"],
    client_capabilities: STREAM_TYPING,
  });
  const plain = await openQueue(sb.as(MEMBER), { event_types: ["typing"] });
  const ownerId = sb.sandbox.control.users().find((u) => u.email === OWNER)!.user_id;
  const reply = await sb
    .as(OWNER)
    .post("/typing", { type: "channel", op: "stop", stream_id: 1, topic: "(no topic)" });
  expect(reply.status).toBe(200);
  expect(await capable.peek()).toEqual([
    {
      type: "typing",
      op: "stop",
      message_type: "stream",
      sender: { user_id: ownerId, email: OWNER },
      stream_id: 1,
      topic: "general chat",
      id: 0,
    },
  ]);
  expect(await plain.peek()).toEqual([]);
});

test.for([
  [{ op: "start", type: "private", to: [1] }, "Invalid type"],
  [{ op: "begin", to: [1] }, "Invalid op"],
  [{ op: "start" }, "Missing 'to' argument"],
  [{ op: "start", to: [] }, "Empty 'to' list"],
  [{ op: "start", to: [999] }, "Invalid user ID 999"],
  [{ op: "start", to: "1" }, "to is not a list"],
  [{ op: "start", type: "stream", topic: "t" }, "Missing 'stream_id' argument"],
  [{ op: "start", type: "channel", stream_id: 1 }, "Missing topic"],
] as const)("typing error: %o → %s", async ([form, msg], { sb }) => {
  const reply = await sb.as(BOT).post("/typing", form as Record<string, unknown>);
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual({ result: "error", msg, code: "BAD_REQUEST" });
});

test("a missing op is REQUEST_VARIABLE_MISSING", async ({ sb }) => {
  const reply = await sb.as(BOT).post("/typing", { to: [1] });
  expect(reply.body).toEqual({
    result: "error",
    msg: "Missing 'op' argument",
    code: "REQUEST_VARIABLE_MISSING",
    var_name: "op",
  });
});

test("users who disabled sending typing notifications get an error", async ({ sb }) => {
  const user = sb.sandbox.control.createUser({
    email: "shy@sandbox.example",
    full_name: "Shy",
    settings: { send_private_typing_notifications: false, send_stream_typing_notifications: false },
    channels: ["general"],
  });
  const direct = await sb.as(user.email).post("/typing", { op: "start", to: [user.user_id] });
  expect(direct.body.msg).toBe("User has disabled typing notifications for direct messages");
  const stream = await sb
    .as(user.email)
    .post("/typing", { op: "start", type: "stream", stream_id: 1, topic: "t" });
  expect(stream.body.msg).toBe("User has disabled typing notifications for channel messages");
});
