import { openQueue } from "../support/sandbox/events.ts";
import { BOT, expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";

/** A base clock on a whole minute, so delivery checks fall on known boundaries. */
const T0 = 1_700_000_040_000;
test.override({ sandboxOptions: { clock: { now: () => T0 } } });

const NOW = T0 / 1000;

test("create, list, and the add event goes to the owner only", async ({ sb }) => {
  const mine = await openQueue(sb.as(MEMBER), { event_types: ["scheduled_messages"] });
  const theirs = await openQueue(sb.as(OWNER), { event_types: ["scheduled_messages"] });
  const reply = await sb.as(MEMBER).post("/scheduled_messages", {
    type: "channel",
    to: 1,
    topic: "later",
    content: "hello **later**",
    scheduled_delivery_timestamp: NOW + 120,
  });
  expect(reply.status).toBe(200);
  const id = reply.body.scheduled_message_id;
  const sm = {
    scheduled_message_id: id,
    type: "stream",
    to: 1,
    topic: "later",
    content: "hello **later**",
    rendered_content: "<p>hello <strong>later</strong></p>",
    scheduled_delivery_timestamp: NOW + 120,
    failed: false,
  };
  expect((await sb.as(MEMBER).get("/scheduled_messages")).body.scheduled_messages).toEqual([sm]);
  expect(await mine.peek()).toEqual([
    { type: "scheduled_messages", op: "add", scheduled_messages: [sm], id: 0 },
  ]);
  expect(await theirs.peek()).toEqual([]);
  expect((await sb.as(OWNER).get("/scheduled_messages")).body.scheduled_messages).toEqual([]);
});

test("delivery happens at the first whole minute at or after the time, then remove + message events", async ({
  sb,
}) => {
  const q = await openQueue(sb.as(MEMBER), { event_types: ["scheduled_messages", "message"] });
  const memberId = sb.sandbox.control.users().find((u) => u.email === MEMBER)!.user_id;
  const ownerId = sb.sandbox.control.users().find((u) => u.email === OWNER)!.user_id;
  const { body } = await sb.as(MEMBER).post("/scheduled_messages", {
    type: "direct",
    to: [ownerId, memberId],
    content: "ping",
    scheduled_delivery_timestamp: NOW + 30,
  });
  await q.peek();
  await sb.as(MEMBER).get("/events", { queue_id: q.id, last_event_id: 0, dont_block: true });
  sb.sandbox.control.advanceClock(30_000);
  expect(sb.sandbox.control.messages()).toHaveLength(0);
  sb.sandbox.control.advanceClock(30_000);
  expect(sb.sandbox.control.messages()).toHaveLength(1);
  const events = await q.peek(0);
  expect(events.map((e) => `${e.type}/${e.op ?? ""}`)).toEqual(["message/", "scheduled_messages/remove"]);
  expect(events[1]).toMatchObject({ scheduled_message_id: body.scheduled_message_id });
  expect((await sb.as(MEMBER).get("/scheduled_messages")).body.scheduled_messages).toEqual([]);
});

test("more than 10 minutes late fails: failed:true, update event, Notification Bot DM", async ({ sb }) => {
  const q = await openQueue(sb.as(MEMBER), {
    event_types: ["scheduled_messages", "message"],
    queue_lifespan_secs: 3600,
  });
  const { body } = await sb.as(MEMBER).post("/scheduled_messages", {
    type: "stream",
    to: 1,
    topic: "t",
    content: "too late",
    scheduled_delivery_timestamp: NOW + 60,
  });
  await sb.as(MEMBER).get("/events", { queue_id: q.id, last_event_id: 0, dont_block: true });
  sb.sandbox.control.advanceClock(60_000 + 11 * 60_000);
  const events = await q.peek(0);
  expect(events[0]).toMatchObject({
    type: "scheduled_messages",
    op: "update",
    scheduled_message: { scheduled_message_id: body.scheduled_message_id, failed: true },
  });
  expect(events[1]).toMatchObject({
    type: "message",
    message: { sender_email: "notification-bot@zulip.com" },
  });
  expect((events[1]!.message as { content: string }).content).toBe(
    "The message you scheduled for <time:2023-11-14T22:15:00+00:00> was not sent because of the following error:\n\n" +
      "> Message could not be sent at the scheduled time.\n\n[View scheduled messages](#scheduled)",
  );
  const listed = (await sb.as(MEMBER).get("/scheduled_messages")).body.scheduled_messages;
  expect(listed[0].failed).toBe(true);
  const noTime = await sb
    .as(MEMBER)
    .patch(`/scheduled_messages/${body.scheduled_message_id}`, { content: "retry" });
  expect(noTime.body).toEqual({
    result: "error",
    msg: "Scheduled delivery time must be in the future.",
    code: "BAD_REQUEST",
  });
  const now = Math.floor(sb.sandbox.control.now() / 1000);
  const fixed = await sb.as(MEMBER).patch(`/scheduled_messages/${body.scheduled_message_id}`, {
    scheduled_delivery_timestamp: now + 300,
  });
  expect(fixed.status).toBe(200);
  expect((await sb.as(MEMBER).get("/scheduled_messages")).body.scheduled_messages[0].failed).toBe(false);
});

test("creation errors", async ({ sb }) => {
  const member = sb.as(MEMBER);
  const base = { type: "stream", to: 1, topic: "t", content: "x", scheduled_delivery_timestamp: NOW + 60 };
  const past = await member.post("/scheduled_messages", { ...base, scheduled_delivery_timestamp: NOW });
  expect(past.body).toEqual({
    result: "error",
    msg: "Scheduled delivery time must be in the future.",
    code: "BAD_REQUEST",
  });
  const noStream = await member.post("/scheduled_messages", { ...base, to: 77 });
  expect(noStream.body).toEqual({
    result: "error",
    msg: "Channel with ID '77' does not exist",
    code: "STREAM_DOES_NOT_EXIST",
    stream_id: 77,
  });
  const badUser = await member.post("/scheduled_messages", { ...base, type: "direct", to: [999] });
  expect(badUser.body).toEqual({ result: "error", msg: "Invalid user ID 999", code: "BAD_REQUEST" });
  const names = await member.post("/scheduled_messages", { ...base, to: "general" });
  expect(names.body.msg).toBe("to is not valid JSON");
  const noTopic = await member.post("/scheduled_messages", { ...base, topic: undefined });
  expect(noTopic.body.msg).toBe("Missing topic");
});

test("a `to` of the wrong shape is refused in the server's words: the union's int member, then the type's", async ({
  sb,
}) => {
  const member = sb.as(MEMBER);
  const memberId = (await member.get("/users/me")).body.user_id;
  const base = { topic: "t", content: "x", scheduled_delivery_timestamp: NOW + 60 };
  const error = (msg: string) => ({ result: "error", msg, code: "BAD_REQUEST" });
  const notInt = error('to["int"] is not an integer');
  const cases: [string, string, object][] = [
    // Neither an int nor a list of ints: the first of the union's errors, the int member's.
    ["stream", '"general"', notInt],
    ["direct", '"general"', notInt],
    ["direct", '["member@sandbox.example"]', notInt],
    ["direct", `[${memberId}, "x"]`, notInt],
    ["stream", "1.0", notInt],
    ["direct", "[1.5]", notInt],
    ["stream", "true", notInt],
    ["direct", "{}", notInt],
    // A well-formed `to` of the other type's shape.
    ["stream", "[1]", error("Invalid data type for channel ID")],
    ["stream", "[]", error("Invalid data type for channel ID")],
    ["direct", String(memberId), error("Invalid data type for recipients")],
    // Well-formed, and then looked up.
    ["direct", "[]", error("Message must have recipients")],
    ["direct", "[-1]", error("Invalid user ID -1")],
  ];
  for (const [type, to, body] of cases) {
    const reply = await member.post("/scheduled_messages", { ...base, type, to });
    expect([type, to, reply.status, reply.body]).toEqual([type, to, 400, body]);
  }
  const negative = await member.post("/scheduled_messages", { ...base, type: "stream", to: "-1" });
  expect(negative.body).toMatchObject({ code: "STREAM_DOES_NOT_EXIST", stream_id: -1 });
  const created = await member.post("/scheduled_messages", { ...base, type: "stream", to: 1 });
  const edit = await member.patch(`/scheduled_messages/${created.body.scheduled_message_id}`, { to: "[1]" });
  expect(edit.body).toEqual(error("Invalid data type for channel ID"));
  expect(
    (await member.patch(`/scheduled_messages/${created.body.scheduled_message_id}`, { to: '"x"' })).body,
  ).toEqual(notInt);
});

test("parameters are checked in the server's order; a type outside the list has the validator's wording", async ({
  sb,
}) => {
  const member = sb.as(MEMBER);
  const missing = async (form: Record<string, unknown>) =>
    (await member.post("/scheduled_messages", form as never)).body.var_name;
  expect(await missing({})).toBe("content");
  expect(await missing({ content: "x" })).toBe("to");
  expect(await missing({ content: "x", to: 1 })).toBe("type");
  expect(await missing({ content: "x", to: 1, type: "stream" })).toBe("scheduled_delivery_timestamp");
  const notInList = {
    result: "error",
    msg: "Invalid type: Value error, Not in the list of possible values",
    code: "BAD_REQUEST",
  };
  const base = { type: "email", to: 1, topic: "t", content: "x", scheduled_delivery_timestamp: NOW + 60 };
  expect((await member.post("/scheduled_messages", base)).body).toEqual(notInList);
  expect((await member.post("/scheduled_messages", { ...base, to: "general" })).body.msg).toBe(
    "to is not valid JSON",
  );
  const created = await member.post("/scheduled_messages", { ...base, type: "stream" });
  const edited = await member.patch(`/scheduled_messages/${created.body.scheduled_message_id}`, {
    type: "email",
    to: 1,
  });
  expect(edited.body).toEqual(notInList);
});

test("edit and delete rules, 404 for unknown or foreign ids", async ({ sb }) => {
  const { body } = await sb.as(MEMBER).post("/scheduled_messages", {
    type: "stream",
    to: 1,
    topic: "t",
    content: "x",
    scheduled_delivery_timestamp: NOW + 600,
  });
  const id = body.scheduled_message_id;
  const notFound = { result: "error", msg: "Scheduled message does not exist", code: "BAD_REQUEST" };
  const foreign = await sb.as(OWNER).delete(`/scheduled_messages/${id}`);
  expect(foreign.status).toBe(404);
  expect(foreign.body).toEqual(notFound);
  expect((await sb.as(MEMBER).patch("/scheduled_messages/999", { content: "y" })).status).toBe(404);
  expect((await sb.as(MEMBER).patch(`/scheduled_messages/${id}`, {})).body.msg).toBe("Nothing to change");
  expect((await sb.as(MEMBER).patch(`/scheduled_messages/${id}`, { type: "direct" })).body.msg).toBe(
    "Recipient required when updating type of scheduled message.",
  );
  expect((await sb.as(MEMBER).patch(`/scheduled_messages/${id}`, { type: "stream", to: 1 })).body.msg).toBe(
    "Topic required when updating scheduled message type to channel.",
  );
  const q = await openQueue(sb.as(MEMBER), { event_types: ["scheduled_messages"] });
  expect((await sb.as(MEMBER).patch(`/scheduled_messages/${id}`, { content: "edited" })).status).toBe(200);
  expect((await sb.as(MEMBER).delete(`/scheduled_messages/${id}`)).status).toBe(200);
  expect((await q.peek()).map((e) => e.op)).toEqual(["update", "remove"]);
  expect((await sb.as(MEMBER).delete(`/scheduled_messages/${id}`)).status).toBe(404);
});

test("a bot's scheduled DM is not read by default; the sender's client decides", async ({ sb }) => {
  const memberId = sb.sandbox.control.users().find((u) => u.email === MEMBER)!.user_id;
  await sb.as(BOT).post("/scheduled_messages", {
    type: "direct",
    to: [memberId],
    content: "x",
    scheduled_delivery_timestamp: NOW + 60,
  });
  sb.sandbox.control.advanceClock(60_000);
  const [msg] = sb.sandbox.control.messages() as { flags: Record<string, string[]>; sender_id: number }[];
  expect(msg!.flags[String(msg!.sender_id)]).toEqual([]);
});

test("GET lists `to` as the server does: a channel's id, a direct message's users without the sender", async ({
  sb,
}) => {
  const id = (email: string) => sb.sandbox.control.users().find((u) => u.email === email)!.user_id;
  const book = (type: string, to: number | number[]) =>
    sb.as(MEMBER).post("/scheduled_messages", {
      type,
      to,
      ...(type === "stream" ? { topic: "t" } : {}),
      content: "x",
      scheduled_delivery_timestamp: NOW + 60,
    });
  await book("stream", 1);
  await book("direct", [id(MEMBER), id(OWNER)]);
  await book("direct", [id(MEMBER)]);
  await book("direct", [id(OWNER), id(BOT)]);
  const listed = (await sb.as(MEMBER).get("/scheduled_messages")).body.scheduled_messages;
  expect(listed.map((s: { type: string; to: unknown }) => [s.type, s.to])).toEqual([
    ["stream", 1],
    ["private", [id(OWNER)]],
    ["private", [id(MEMBER)]],
    ["private", [id(OWNER), id(BOT)].sort((a, b) => a - b)],
  ]);
});

test('GET lists the stored topic: stripped, the empty topic as "" (no display name), a long one cut with ...', async ({
  sb,
}) => {
  const book = (topic: string) =>
    sb.as(MEMBER).post("/scheduled_messages", {
      type: "channel",
      to: 1,
      topic,
      content: `in ${topic}`,
      scheduled_delivery_timestamp: NOW + 120,
    });
  const long = "x".repeat(70);
  for (const topic of ["", "(no topic)", " general chat ", "  a  b  ", long])
    expect((await book(topic)).status).toBe(200);
  // The endpoint takes no parameters: allow_empty_topic_name changes nothing and is reported as ignored.
  const listed = await sb.as(MEMBER).get("/scheduled_messages", { allow_empty_topic_name: "false" });
  expect(listed.body.ignored_parameters_unsupported).toEqual(["allow_empty_topic_name"]);
  expect(listed.body.scheduled_messages.map((s: { topic: string }) => s.topic)).toEqual([
    "",
    "",
    "",
    "a  b",
    `${"x".repeat(57)}...`,
  ]);
});
