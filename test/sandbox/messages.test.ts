import { describe } from "vitest";
import { openQueue } from "../support/sandbox/events.ts";
import { BOT, expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";

type Msg = Record<string, unknown>;

test("to accepts a channel name, a JSON id, a JSON string and a one-element list", async ({ sb }) => {
  const bot = sb.as(BOT);
  const general = sb.sandbox.control.messages();
  expect(general).toEqual([]);
  for (const to of ["general", "1", '"general"', "[1]", '["general"]']) {
    const reply = await bot.post("/messages", { type: "stream", to, topic: "t", content: `to=${to}` });
    expect(reply.status, reply.text).toBe(200);
  }
  expect(sb.sandbox.control.messages().map((m) => m.stream_id)).toEqual([1, 1, 1, 1, 1]);
  const two = await bot.post("/messages", { type: "stream", to: "[1,2]", topic: "t", content: "x" });
  expect(two.body.msg).toBe("Expected exactly one channel");
});

test("an unknown channel is STREAM_DOES_NOT_EXIST with the escaped name, and the bot's owner is told", async ({
  sb,
}) => {
  const owner = await openQueue(sb.as(OWNER), { event_types: ["message"] });
  const reply = await sb
    .as(BOT)
    .post("/messages", { type: "stream", to: "<nope>", topic: "t", content: "x" });
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual({
    result: "error",
    msg: "Channel '&lt;nope&gt;' does not exist",
    code: "STREAM_DOES_NOT_EXIST",
    stream: "&lt;nope&gt;",
  });
  const events = await owner.peek();
  expect(events).toHaveLength(1);
  expect(events[0]!.message).toMatchObject({ sender_email: "notification-bot@zulip.com", type: "private" });
  expect((events[0]!.message as Msg).content).toContain("tried to send a message to channel #**<nope>**");
  const byId = await sb.as(BOT).post("/messages", { type: "stream", to: "99", topic: "t", content: "x" });
  expect(byId.body).toEqual({
    result: "error",
    msg: "Channel with ID '99' does not exist",
    code: "STREAM_DOES_NOT_EXIST",
    stream_id: 99,
  });
  // By id too (bare, or a JSON list of one), the owner is told, naming the id.
  await sb.as(BOT).post("/messages", { type: "stream", to: "[98]", topic: "t", content: "x" });
  const told = (await owner.peek()).slice(1).map((e) => (e.message as Msg).content);
  expect(told).toEqual([
    expect.stringContaining(
      "tried to send a message to channel ID 99, but there is no channel with that ID.",
    ),
    expect.stringContaining(
      "tried to send a message to channel ID 98, but there is no channel with that ID.",
    ),
  ]);
});

test("direct messages take user ids or emails, not both; aliases are stored as private/stream", async ({
  sb,
}) => {
  const ids = sb.sandbox.control.users();
  const member = ids.find((u) => u.email === MEMBER)!;
  const bot = sb.as(BOT);
  expect(
    (await bot.post("/messages", { type: "direct", to: [member.user_id], content: "by id" })).status,
  ).toBe(200);
  expect((await bot.post("/messages", { type: "private", to: MEMBER, content: "by email" })).status).toBe(
    200,
  );
  expect(
    (await bot.post("/messages", { type: "channel", to: "general", topic: "x", content: "chan" })).status,
  ).toBe(200);
  const mixed = await bot.post("/messages", { type: "direct", to: [member.user_id, OWNER], content: "x" });
  expect(mixed.body.msg).toBe("Recipient lists may contain emails or user IDs, but not both.");
  const bad = await bot.post("/messages", { type: "direct", to: [999], content: "x" });
  expect(bad.body).toEqual({ result: "error", msg: "Invalid user ID 999", code: "BAD_REQUEST" });
  const empty = await bot.post("/messages", { type: "direct", to: [], content: "x" });
  expect(empty.body.msg).toBe("Message must have recipients");
  expect(sb.sandbox.control.messages().map((m) => m.type)).toEqual(["private", "private", "stream"]);
  const invalid = await bot.post("/messages", { type: "dm", to: "general", content: "x" });
  expect(invalid.body.msg).toBe("Invalid type");
});

test("topics are stripped, '(no topic)' and the display name mean '', long ones truncated", async ({
  sb,
}) => {
  const bot = sb.as(BOT);
  await bot.post("/messages", { type: "stream", to: "general", topic: "  padded  ", content: "a" });
  await bot.post("/messages", { type: "stream", to: "general", topic: "(no topic)", content: "b" });
  await bot.post("/messages", { type: "stream", to: "general", subject: "general chat", content: "c" });
  await bot.post("/messages", { type: "stream", to: "general", topic: "x".repeat(70), content: "d" });
  expect(sb.sandbox.control.messages().map((m) => m.topic)).toEqual([
    "padded",
    "",
    "",
    `${"x".repeat(57)}...`,
  ]);
  const missing = await bot.post("/messages", { type: "stream", to: "general", content: "e" });
  expect(missing.body).toEqual({ result: "error", msg: "Missing topic", code: "BAD_REQUEST" });
});

test("a narrow to the topic 'general chat' finds the empty topic, as the server's fetch rewrites it; '(no topic)' finds nothing", async ({
  sb,
}) => {
  const bot = sb.as(BOT);
  await bot.post("/messages", { type: "stream", to: "general", topic: "(no topic)", content: "empty" });
  await bot.post("/messages", { type: "stream", to: "general", topic: "named", content: "named" });
  const read = async (topic: string) => {
    const narrow = JSON.stringify([
      { operator: "channel", operand: "general" },
      { operator: "topic", operand: topic },
    ]);
    const reply = await bot.get("/messages", {
      anchor: "newest",
      num_before: 10,
      narrow,
      apply_markdown: false,
    });
    return [topic, reply.body.messages.map((m: Msg) => m.content)];
  };
  expect(await read("general chat")).toEqual(["general chat", ["empty"]]);
  expect(await read("")).toEqual(["", ["empty"]]);
  // Only the display name itself, as written, is rewritten; "(no topic)" is not.
  expect(await read("(no topic)")).toEqual(["(no topic)", []]);
  expect(await read("General Chat")).toEqual(["General Chat", []]);
  // Below feature level 334 there is no empty topic: "general chat" is a topic of that name.
  sb.sandbox.control.restartQueues({ featureLevel: 333 });
  await bot.post("/messages", { type: "stream", to: "general", topic: "general chat", content: "named so" });
  expect(await read("general chat")).toEqual(["general chat", ["named so"]]);
});

test("too-long content is truncated, empty content rejected", async ({ sb }) => {
  const bot = sb.as(BOT);
  await bot.post("/messages", { type: "stream", to: "general", topic: "t", content: "y".repeat(10050) });
  const content = sb.sandbox.control.messages()[0]!.content as string;
  expect(content).toHaveLength(10000);
  expect(content.endsWith("\n[message truncated]")).toBe(true);
  const empty = await bot.post("/messages", { type: "stream", to: "general", topic: "t", content: "   " });
  expect(empty.body.msg).toBe("Message must not be empty");
});

test("content keeps its leading spaces; its leading line breaks and trailing whitespace are dropped, on a send and on an edit", async ({
  sb,
}) => {
  // As the real server's normalize_body: rstrip(), then lstrip("\n").
  const bot = sb.as(BOT);
  const content = "\n\n    code\n\nwords \t\n ";
  const { id } = (await bot.post("/messages", { type: "stream", to: "general", topic: "t", content })).body;
  const shown = () => sb.sandbox.control.messages().find((m) => m.id === id)!.content;
  expect(shown()).toBe("    code\n\nwords");
  expect((await bot.patch(`/messages/${id}`, { content: `\n words ${content}` })).status).toBe(200);
  expect(shown()).toBe(" words \n\n    code\n\nwords");
});

test("an edit to blank content leaves (deleted), as the real server does; a send of blank content is refused", async ({
  sb,
}) => {
  const bot = sb.as(BOT);
  const { id } = (
    await bot.post("/messages", { type: "stream", to: "general", topic: "t", content: "words" })
  ).body;
  const edit = await bot.patch(`/messages/${id}`, { content: " \n\t " });
  expect(edit.status).toBe(200);
  expect(sb.sandbox.control.messages().find((m) => m.id === id)!.content).toBe("(deleted)");
  const send = await bot.post("/messages", { type: "stream", to: "general", topic: "t", content: " \n" });
  expect(send.body.msg).toBe("Message must not be empty");
});

test("trailing whitespace is what the server's Python strips: information separators and U+0085 go, U+FEFF stays", async ({
  sb,
}) => {
  const bot = sb.as(BOT);
  const send = async (content: string) => {
    const { id } = (await bot.post("/messages", { type: "stream", to: "general", topic: "t", content })).body;
    return sb.sandbox.control.messages().find((m) => m.id === id)!.content;
  };
  expect(await send("words\u001c\u001f\u0085 ")).toBe("words");
  expect(await send("words\ufeff")).toBe("words\ufeff");
  expect(
    (await bot.post("/messages", { type: "stream", to: "general", topic: "t", content: "\u001e\u0085" })).body
      .msg,
  ).toBe("Message must not be empty");
});

test("private channels need a subscription to post", async ({ sb }) => {
  const reply = await sb
    .as(MEMBER)
    .post("/messages", { type: "stream", to: "moderation", topic: "t", content: "x" });
  expect(reply.body).toEqual({
    result: "error",
    msg: "Not authorized to send to channel 'moderation'",
    code: "BAD_REQUEST",
  });
});

test("GET /messages: newest, oldest, numeric anchors and the found_* flags", async ({ sb }) => {
  for (let i = 1; i <= 5; i++)
    sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: `m${i}` });
  const bot = sb.as(BOT);
  const newest = await bot.get("/messages", { anchor: "newest", num_before: 2, num_after: 0 });
  expect(newest.body.messages.map((m: Msg) => m.content)).toEqual(["<p>m4</p>", "<p>m5</p>"]);
  expect(newest.body).toMatchObject({
    found_newest: true,
    found_oldest: false,
    found_anchor: false,
    history_limited: false,
  });
  const oldest = await bot.get("/messages", {
    anchor: "oldest",
    num_before: 0,
    num_after: 2,
    apply_markdown: false,
  });
  expect(oldest.body.messages.map((m: Msg) => m.content)).toEqual(["m1", "m2"]);
  expect(oldest.body).toMatchObject({ anchor: 0, found_oldest: true, found_newest: false });
  const around = await bot.get("/messages", {
    anchor: "3",
    num_before: 1,
    num_after: 5,
    apply_markdown: false,
  });
  expect(around.body.messages.map((m: Msg) => m.id)).toEqual([2, 3, 4, 5]);
  expect(around.body).toMatchObject({
    anchor: 3,
    found_anchor: true,
    found_oldest: false,
    found_newest: true,
  });
  const after = await bot.get("/messages", {
    anchor: "3",
    include_anchor: false,
    num_before: 0,
    num_after: 10,
  });
  expect(after.body.messages.map((m: Msg) => m.id)).toEqual([4, 5]);
  expect(after.body.found_anchor).toBe(false);
});

test("GET /messages: first_unread anchor and message flags", async ({ sb }) => {
  sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "a" });
  sb.sandbox.control.sendAs(BOT, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "own",
    readBySender: true,
  });
  sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "b" });
  const reply = await sb.as(BOT).get("/messages", { anchor: "first_unread", num_before: 0, num_after: 0 });
  expect(reply.body.anchor).toBe(1);
  const all = await sb.as(BOT).get("/messages", { anchor: "oldest", num_before: 0, num_after: 10 });
  expect(all.body.messages.map((m: Msg) => m.flags)).toEqual([[], ["read"], []]);
});

test("GET /messages narrows: channel, topic, sender, dm, is:dm, negation", async ({ sb }) => {
  const c = sb.sandbox.control;
  const bot = c.users().find((u) => u.email === BOT)!;
  c.sendAs(MEMBER, { type: "stream", to: "general", topic: "alpha", content: "1" });
  c.sendAs(OWNER, { type: "stream", to: "general", topic: "beta", content: "2" });
  c.sendAs(MEMBER, { type: "private", to: [bot.user_id], content: "3" });
  c.sendAs(OWNER, { type: "stream", to: "general", topic: "Alpha", content: "4" });
  const ids = async (narrow: unknown) => {
    const reply = await sb
      .as(BOT)
      .get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow });
    expect(reply.status, reply.text).toBe(200);
    return reply.body.messages.map((m: Msg) => m.id);
  };
  expect(
    await ids([
      { operator: "channel", operand: "general" },
      { operator: "topic", operand: "alpha" },
    ]),
  ).toEqual([1, 4]);
  expect(
    await ids([
      ["stream", "general"],
      ["sender", OWNER],
    ]),
  ).toEqual([2, 4]);
  expect(
    await ids([{ operator: "dm", operand: [c.users().find((u) => u.email === MEMBER)!.user_id] }]),
  ).toEqual([3]);
  expect(await ids([{ operator: "is", operand: "dm" }])).toEqual([3]);
  expect(await ids([{ operator: "is", operand: "dm", negated: true }])).toEqual([1, 2, 4]);
  expect(
    await ids([
      { operator: "channel", operand: 1 },
      { operator: "search", operand: "4" },
    ]),
  ).toEqual([4]);
  const bad = await sb
    .as(BOT)
    .get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [["bogus", "x"]] });
  expect(bad.body).toEqual({
    result: "error",
    msg: "Invalid narrow operator: unknown operator bogus",
    code: "BAD_NARROW",
    desc: "unknown operator bogus",
  });
});

test("GET /messages: a public channel's history is readable without a subscription, a protected one is not", async ({
  sb,
}) => {
  const c = sb.sandbox.control;
  c.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "old" });
  const late = c.createUser({ email: "late@sandbox.example", full_name: "Late" });
  const publicHistory = await sb.as(late.email).get("/messages", {
    anchor: "newest",
    num_before: 10,
    num_after: 0,
    narrow: [["channel", "general"]],
  });
  expect(publicHistory.body.messages.map((m: Msg) => m.flags)).toEqual([["read", "historical"]]);
  c.sendAs(OWNER, { type: "stream", to: "moderation", topic: "t", content: "before" });
  await sb
    .as(OWNER)
    .post("/users/me/subscriptions", { subscriptions: [{ name: "moderation" }], principals: [MEMBER] });
  c.sendAs(OWNER, { type: "stream", to: "moderation", topic: "t", content: "after" });
  const mod = await sb.as(MEMBER).get("/messages", {
    anchor: "newest",
    num_before: 10,
    num_after: 0,
    narrow: [["channel", "moderation"]],
    apply_markdown: false,
  });
  expect(mod.body.messages.map((m: Msg) => m.content)).toEqual(["after"]);
});

describe("on a still clock (only advanceClock moves it, so each edit's second is exact)", () => {
  test.override({ sandboxOptions: { clock: { now: () => 1_790_000_000_000 } } });

  test("PATCH content and topic builds the edit history snapshots", async ({ sb }) => {
    const c = sb.sandbox.control;
    const member = sb.as(MEMBER);
    const { id } = c.sendAs(MEMBER, { type: "stream", to: "general", topic: "first", content: "v1" });
    const t0 = Math.floor(c.now() / 1000);
    c.advanceClock(10_000);
    expect((await member.patch(`/messages/${id}`, { content: "v2" })).status).toBe(200);
    c.advanceClock(10_000);
    expect((await member.patch(`/messages/${id}`, { topic: "second" })).status).toBe(200);
    const memberId = c.users().find((u) => u.email === MEMBER)!.user_id;
    const history = await member.get(`/messages/${id}/history`);
    expect(history.status).toBe(200);
    const snaps = history.body.message_history;
    expect(snaps).toHaveLength(3);
    expect(snaps[0]).toEqual({
      topic: "first",
      content: "v1",
      rendered_content: "<p>v1</p>",
      timestamp: t0,
      user_id: memberId,
    });
    expect(snaps[1]).toMatchObject({
      topic: "first",
      content: "v2",
      rendered_content: "<p>v2</p>",
      prev_content: "v1",
      prev_rendered_content: "<p>v1</p>",
      timestamp: t0 + 10,
      user_id: memberId,
    });
    expect(snaps[1].content_html_diff).toContain("highlight_text_inserted");
    expect(snaps[1].prev_topic).toBeUndefined();
    expect(snaps[2]).toEqual({
      topic: "second",
      prev_topic: "first",
      content: "v2",
      rendered_content: "<p>v2</p>",
      timestamp: t0 + 20,
      user_id: memberId,
    });
  });
});

test("edit history maps the empty topic unless allow_empty_topic_name", async ({ sb }) => {
  const { id } = sb.sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "",
    content: "x",
  });
  await sb.as(MEMBER).patch(`/messages/${id}`, { topic: "named" });
  const plain = await sb.as(MEMBER).get(`/messages/${id}/history`);
  expect(plain.body.message_history[1]).toMatchObject({ topic: "named", prev_topic: "general chat" });
  const raw = await sb.as(MEMBER).get(`/messages/${id}/history`, { allow_empty_topic_name: true });
  expect(raw.body.message_history[0].topic).toBe("");
});

test("history of a missing message is Invalid message(s)", async ({ sb }) => {
  const reply = await sb.as(MEMBER).get("/messages/42/history");
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual({ result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" });
});

test("update_message events carry both content forms and orig/new subjects", async ({ sb }) => {
  const q = await openQueue(sb.as(OWNER), { event_types: ["update_message"] });
  const { id } = sb.sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "a",
  });
  await sb.as(MEMBER).patch(`/messages/${id}`, { content: "b", topic: "u" });
  const [event] = await q.peek();
  expect(event).toMatchObject({
    type: "update_message",
    message_id: id,
    message_ids: [id],
    rendering_only: false,
    flags: [],
    orig_content: "a",
    content: "b",
    orig_rendered_content: "<p>a</p>",
    rendered_content: "<p>b</p>",
    orig_subject: "t",
    subject: "u",
    propagate_mode: "change_one",
    stream_id: 1,
  });
});

test("only the sender may edit content; nothing to change is an error", async ({ sb }) => {
  const { id } = sb.sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "a",
  });
  const other = await sb.as(BOT).patch(`/messages/${id}`, { content: "b" });
  expect(other.body.msg).toBe("You don't have permission to edit this message");
  const nothing = await sb.as(MEMBER).patch(`/messages/${id}`, {});
  expect(nothing.body.msg).toBe("Nothing to change");
});

test("an edit's request is checked as the server checks it", async ({ sb }) => {
  const c = sb.sandbox.control;
  const { id } = c.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "a" });
  const dm = c.sendAs(MEMBER, { type: "direct", to: [OWNER], content: "hi" }).id;
  const refusal = async (msgId: number, form: Record<string, unknown>) => {
    const reply = await sb.as(MEMBER).patch(`/messages/${msgId}`, form);
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe("BAD_REQUEST");
    return reply.body.msg;
  };
  // The topic the message already has is no change.
  expect(await refusal(id, { topic: " t " })).toBe("Nothing to change");
  expect(await refusal(dm, { topic: "x" })).toBe("Direct messages cannot have topics.");
  expect(await refusal(dm, { stream_id: 1 })).toBe("Direct messages cannot be moved to channels.");
  expect(await refusal(id, { content: "b", propagate_mode: "change_all" })).toBe(
    "Invalid propagate_mode without topic edit",
  );
  expect(await refusal(id, { content: "b", stream_id: 1, topic: "u" })).toBe(
    "Cannot change message content while changing channel",
  );
  expect(c.messages().find((m) => m.id === id)).toMatchObject({ topic: "t", content: "a" });
});

test("DELETE sends bulk or singular delete_message events by capability", async ({ sb }) => {
  const bulk = await openQueue(sb.as(OWNER), {
    event_types: ["delete_message"],
    client_capabilities: { notification_settings_null: true, bulk_message_deletion: true },
  });
  const single = await openQueue(sb.as(OWNER), { event_types: ["delete_message"] });
  const { id } = sb.sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "",
    content: "a",
  });
  expect((await sb.as(BOT).delete(`/messages/${id}`)).body.msg).toBe(
    "You don't have permission to delete this message",
  );
  expect((await sb.as(MEMBER).delete(`/messages/${id}`)).status).toBe(200);
  expect(await bulk.peek()).toEqual([
    {
      type: "delete_message",
      message_type: "stream",
      stream_id: 1,
      topic: "general chat",
      message_ids: [id],
      id: 0,
    },
  ]);
  expect(await single.peek()).toEqual([
    {
      type: "delete_message",
      message_type: "stream",
      stream_id: 1,
      topic: "general chat",
      message_id: id,
      id: 0,
    },
  ]);
  expect((await sb.as(MEMBER).get(`/messages/${id}`)).body.msg).toBe("Invalid message(s)");
});

test("GET /messages/{id} returns the message with raw_content", async ({ sb }) => {
  const { id } = sb.sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "**hi**",
  });
  const reply = await sb.as(BOT).get(`/messages/${id}`);
  expect(reply.body.raw_content).toBe("**hi**");
  expect(reply.body.message).toMatchObject({ id, content: "<p><strong>hi</strong></p>", subject: "t" });
});

test("GET /messages/{id} with apply_markdown=false gives the raw Markdown as last edited; deleted, 400 Invalid message(s)", async ({
  sb,
}) => {
  const member = sb.as(MEMBER);
  const { id } = sb.sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "**hi**",
  });
  // Trailing whitespace is dropped from the content the server keeps.
  expect((await member.patch(`/messages/${id}`, { content: "**Rolling…**\n\n(failed)\n  " })).status).toBe(
    200,
  );
  const reply = await member.get(`/messages/${id}`, { apply_markdown: "false" });
  expect(reply.status).toBe(200);
  expect(reply.body.raw_content).toBe("**Rolling…**\n\n(failed)");
  expect(reply.body.message).toMatchObject({
    id,
    content: "**Rolling…**\n\n(failed)",
    content_type: "text/x-markdown",
    subject: "t",
  });
  expect((await member.delete(`/messages/${id}`)).status).toBe(200);
  const gone = await member.get(`/messages/${id}`, { apply_markdown: "false" });
  expect([gone.status, gone.body]).toEqual([
    400,
    { result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" },
  ]);
});

test("GET /messages: window sizes default to 0, a missing anchor and parameters that do not go with message_ids answer as the server's view", async ({
  sb,
}) => {
  const bot = sb.as(BOT);
  const sent = await bot.post("/messages", { type: "stream", to: "general", topic: "t", content: "one" });
  const bare = await bot.get("/messages", { anchor: sent.body.id });
  expect([bare.status, bare.body.messages.map((m: Msg) => m.id), bare.body.found_anchor]).toEqual([
    200,
    [sent.body.id],
    true,
  ]);
  const noAnchor = await bot.get("/messages", { num_before: 1, num_after: 0 });
  expect([noAnchor.status, noAnchor.body]).toEqual([
    400,
    { result: "error", msg: "Missing 'anchor' argument.", code: "BAD_REQUEST" },
  ]);
  const parameters = "num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor";
  const mixed = await bot.get("/messages", { anchor: "newest", message_ids: [sent.body.id] });
  expect([mixed.status, mixed.body]).toEqual([
    400,
    {
      result: "error",
      msg: `Unsupported parameter combination: ${parameters}`,
      code: "BAD_REQUEST",
      parameters,
    },
  ]);
  const byId = await bot.get("/messages", { message_ids: [sent.body.id] });
  expect(byId.body).toMatchObject({ found_anchor: false, found_oldest: false, found_newest: false });
  const excluded = await bot.get("/messages", {
    anchor: sent.body.id,
    num_before: 1,
    num_after: 1,
    include_anchor: false,
  });
  expect(excluded.body).toEqual({
    result: "error",
    msg: "The anchor can only be excluded at an end of the range",
    code: "BAD_REQUEST",
  });
});

test("direct message recipients led by neither an email nor an integer id are 'Invalid data type for recipients'", async ({
  sb,
}) => {
  const bot = sb.as(BOT);
  const member = sb.sandbox.control.users().find((u) => u.email === MEMBER)!;
  // A whole number written with a fraction or an exponent is a float to the server's JSON, no id.
  for (const to of ["[1.5]", "[1.0]", "[1e0]", "1.0", "[null]", "[[1]]", '[{"id":1}]', '{"id":1}', "5"]) {
    const reply = await bot.post("/messages", { type: "direct", to, content: "x" });
    expect([to, reply.status, reply.body]).toEqual([
      to,
      400,
      { result: "error", msg: "Invalid data type for recipients", code: "BAD_REQUEST" },
    ]);
  }
  for (const to of [`[${member.user_id}, 1.5]`, `[${member.user_id}, 1.0]`]) {
    const mixed = await bot.post("/messages", { type: "direct", to, content: "x" });
    expect(mixed.body.msg).toBe("Recipient lists may contain emails or user IDs, but not both.");
  }
  const channel = await bot.post("/messages", { type: "stream", to: "1.0", topic: "t", content: "x" });
  expect(channel.body.msg).toBe("Invalid data type for channel");
  // Refused for its type before any channel is looked up: the bot's owner is told nothing.
  expect(sb.sandbox.control.messages()).toEqual([]);
});

test("a direct message's to reads a boolean as the server's Python does: true is user id 1, false 0", async ({
  sb,
}) => {
  const bot = sb.as(BOT);
  const member = sb.sandbox.control.users().find((u) => u.email === MEMBER)!;
  for (const [to, asRead] of [
    ["[true]", "[1]"],
    ["[false]", "[0]"],
    [`[${member.user_id}, true]`, `[${member.user_id}, 1]`],
  ] as const) {
    const reply = await bot.post("/messages", { type: "direct", to, content: "x" });
    const same = await bot.post("/messages", { type: "direct", to: asRead, content: "x" });
    expect([to, reply.status, reply.body.msg]).toEqual([to, same.status, same.body.msg]);
  }
  const sent = sb.sandbox.control.messages() as { dm_user_ids: number[] }[];
  // [true] and [1], then the member with true and with 1: each reached user 1 ([false] is refused as [0]).
  expect(sent.map((m) => m.dm_user_ids.includes(1))).toEqual([true, true, true, true]);
});

test("GET /messages with a negative window size says the parameter is too small, as the server's NonNegativeInt does", async ({
  sb,
}) => {
  const bot = sb.as(BOT);
  for (const name of ["num_before", "num_after"]) {
    const reply = await bot.get("/messages", { anchor: "newest", num_before: 0, num_after: 0, [name]: -1 });
    expect([name, reply.status, reply.body]).toEqual([
      name,
      400,
      { result: "error", msg: `${name} is too small`, code: "BAD_REQUEST" },
    ]);
  }
  // message_ids is a list of NonNegativeInt: the element below 0 is named by its index.
  for (const [ids, name] of [
    ["[-1]", "message_ids[0]"],
    ["[1, -5, 2]", "message_ids[1]"],
  ] as const) {
    const reply = await bot.get("/messages", { message_ids: ids });
    expect([ids, reply.status, reply.body]).toEqual([
      ids,
      400,
      { result: "error", msg: `${name} is too small`, code: "BAD_REQUEST" },
    ]);
  }
});
