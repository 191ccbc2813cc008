import { openQueue } from "../support/sandbox/events.ts";
import { BOT, expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";

test("event ids are per queue and start at 0; dont_block answers at once without queue_id", async ({
  sb,
}) => {
  const q = await openQueue(sb.as(BOT), { event_types: ["message"] });
  const empty = await q.caller.get("/events", { queue_id: q.id, last_event_id: -1, dont_block: true });
  expect(empty.body).toEqual({ result: "success", msg: "", events: [] });
  sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "one" });
  sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "two" });
  const events = await q.peek();
  expect(events.map((e) => e.id)).toEqual([0, 1]);
  expect(events.map((e) => (e.message as { content: string }).content)).toEqual(["one", "two"]);
  const other = await openQueue(sb.as(BOT), { event_types: ["message"] });
  sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "three" });
  expect((await other.peek()).map((e) => e.id)).toEqual([0]);
});

test("a parked poll completes when an event arrives, with queue_id", async ({ sb }) => {
  const q = await openQueue(sb.as(BOT), { event_types: ["message"] });
  const poll = q.caller.get("/events", { queue_id: q.id, last_event_id: -1 });
  await sb.sandbox.control.waitFor(
    () => sb.sandbox.control.queues().find((x) => x.queue_id === q.id)?.parked,
  );
  sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "hello" });
  const reply = await poll;
  expect(reply.status).toBe(200);
  expect(reply.body.queue_id).toBe(q.id);
  expect(reply.body.events).toHaveLength(1);
  expect(reply.body.events[0]).toMatchObject({ id: 0, type: "message", flags: [] });
  expect(reply.body.ignored_parameters_unsupported).toBeUndefined();
});

test.override({ sandboxOptions: { heartbeatSeconds: 1 } });
test("a parked poll gets a heartbeat, which is a real event to acknowledge", async ({ sb }) => {
  const q = await openQueue(sb.as(BOT), { event_types: ["message"] });
  const reply = await q.caller.get("/events", { queue_id: q.id, last_event_id: -1 });
  expect(reply.body).toEqual({
    result: "success",
    msg: "",
    events: [{ type: "heartbeat", id: 0 }],
    queue_id: q.id,
  });
  expect(await q.peek(-1)).toEqual([{ type: "heartbeat", id: 0 }]);
  expect(await q.peek(0)).toEqual([]);
});

test("acknowledging prunes; re-polling with the old id re-delivers what is left", async ({ sb }) => {
  const q = await openQueue(sb.as(BOT), { event_types: ["message"] });
  for (const c of ["a", "b", "c"])
    sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: c });
  expect((await q.peek(-1)).map((e) => e.id)).toEqual([0, 1, 2]);
  expect((await q.peek(-1)).map((e) => e.id)).toEqual([0, 1, 2]);
  expect((await q.peek(1)).map((e) => e.id)).toEqual([2]);
  expect((await q.peek(1)).map((e) => e.id)).toEqual([2]);
});

test("an ack older than the pruned events is 400 'already been pruned'", async ({ sb }) => {
  const q = await openQueue(sb.as(BOT), { event_types: ["message"] });
  for (const c of ["a", "b"])
    sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: c });
  await q.peek(1);
  const reply = await q.caller.get("/events", { queue_id: q.id, last_event_id: 0, dont_block: true });
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual({
    result: "error",
    msg: "An event newer than 0 has already been pruned!",
    code: "BAD_REQUEST",
  });
});

test("an ack beyond the newest event is 400 'not in this queue' after destructive pruning", async ({
  sb,
}) => {
  const q = await openQueue(sb.as(BOT), { event_types: ["message"] });
  for (const c of ["a", "b"])
    sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: c });
  const reply = await q.caller.get("/events", { queue_id: q.id, last_event_id: 5, dont_block: true });
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual({ result: "error", msg: "Event 5 was not in this queue", code: "BAD_REQUEST" });
  const after = await q.caller.get("/events", { queue_id: q.id, last_event_id: -1, dont_block: true });
  expect(after.body.msg).toBe("An event newer than -1 has already been pruned!");
  expect(await q.peek(1)).toEqual([]);
});

test("a newer poll finishes the parked one with the current contents", async ({ sb }) => {
  const q = await openQueue(sb.as(BOT), { event_types: ["message"] });
  const first = q.caller.get("/events", { queue_id: q.id, last_event_id: -1 });
  await sb.sandbox.control.waitFor(
    () => sb.sandbox.control.queues().find((x) => x.queue_id === q.id)?.parked,
  );
  const second = await q.caller.get("/events", { queue_id: q.id, last_event_id: -1, dont_block: true });
  expect(second.body.events).toEqual([]);
  const firstReply = await first;
  expect(firstReply.body).toEqual({ result: "success", msg: "", events: [], queue_id: q.id });
});

test("missing queue_id and last_event_id", async ({ sb }) => {
  const bot = sb.as(BOT);
  const noQueue = await bot.get("/events", { last_event_id: -1 });
  expect(noQueue.body).toEqual({ result: "error", msg: "Missing 'queue_id' argument", code: "BAD_REQUEST" });
  const q = await openQueue(bot);
  const noLast = await bot.get("/events", { queue_id: q.id });
  expect(noLast.body).toEqual({
    result: "error",
    msg: "Missing 'last_event_id' argument",
    code: "BAD_REQUEST",
  });
});

test("GET /events without queue_id but with dont_block creates a queue and returns its id", async ({
  sb,
}) => {
  const reply = await sb.as(BOT).get("/events", { dont_block: true, event_types: ["message"] });
  expect(reply.status).toBe(200);
  expect(reply.body.events).toEqual([]);
  expect(typeof reply.body.queue_id).toBe("string");
  expect(sb.sandbox.control.queues().find((q) => q.queue_id === reply.body.queue_id)?.event_types).toEqual([
    "message",
  ]);
});

test("an unknown queue, or another user's queue, is BAD_EVENT_QUEUE_ID", async ({ sb }) => {
  const q = await openQueue(sb.as(BOT));
  const foreign = await sb.as(MEMBER).get("/events", { queue_id: q.id, last_event_id: -1, dont_block: true });
  expect(foreign.status).toBe(400);
  expect(foreign.body).toEqual({
    result: "error",
    msg: `Bad event queue ID: ${q.id}`,
    code: "BAD_EVENT_QUEUE_ID",
    queue_id: q.id,
  });
  const del = await sb.as(MEMBER).delete("/events", { queue_id: q.id });
  expect(del.body.code).toBe("BAD_EVENT_QUEUE_ID");
});

test("idle queues are garbage-collected after 10 minutes on the sandbox clock", async ({ sb }) => {
  const q = await openQueue(sb.as(BOT));
  sb.sandbox.control.advanceClock(599_000);
  expect(await q.peek()).toEqual([]);
  sb.sandbox.control.advanceClock(1_000);
  const reply = await q.caller.get("/events", { queue_id: q.id, last_event_id: -1, dont_block: true });
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual({
    result: "error",
    msg: `Bad event queue ID: ${q.id}`,
    code: "BAD_EVENT_QUEUE_ID",
    queue_id: q.id,
  });
});

test("dont_block polls do not keep a queue alive; a parked poll does", async ({ sb }) => {
  const bot = sb.as(BOT);
  const idle = await openQueue(bot);
  const parked = await openQueue(bot);
  const poll = bot.get("/events", { queue_id: parked.id, last_event_id: -1 });
  await sb.sandbox.control.waitFor(
    () => sb.sandbox.control.queues().find((x) => x.queue_id === parked.id)?.parked,
  );
  sb.sandbox.control.advanceClock(300_000);
  await idle.peek();
  sb.sandbox.control.advanceClock(300_000);
  const ids = sb.sandbox.control.queues().map((x) => x.queue_id);
  expect(ids).toContain(parked.id);
  expect(ids).not.toContain(idle.id);
  sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "wake" });
  expect((await poll).status).toBe(200);
});

test("queue_lifespan_secs sets a queue's idle timeout", async ({ sb }) => {
  const q = await openQueue(sb.as(BOT), { queue_lifespan_secs: 30 });
  sb.sandbox.control.advanceClock(30_000);
  expect(sb.sandbox.control.queues().map((x) => x.queue_id)).not.toContain(q.id);
});

test("DELETE /events answers a parked GET first, then removes the queue", async ({ sb }) => {
  const q = await openQueue(sb.as(BOT));
  const poll = q.caller.get("/events", { queue_id: q.id, last_event_id: -1 });
  await sb.sandbox.control.waitFor(
    () => sb.sandbox.control.queues().find((x) => x.queue_id === q.id)?.parked,
  );
  const del = await q.caller.delete("/events", { queue_id: q.id });
  expect(del.body).toEqual({ result: "success", msg: "" });
  expect((await poll).body).toEqual({ result: "success", msg: "", events: [], queue_id: q.id });
  const again = await q.caller.get("/events", { queue_id: q.id, last_event_id: -1, dont_block: true });
  expect(again.body.code).toBe("BAD_EVENT_QUEUE_ID");
});

test("event_types filters what a queue receives", async ({ sb }) => {
  const messagesOnly = await openQueue(sb.as(MEMBER), { event_types: ["message"] });
  const all = await openQueue(sb.as(MEMBER));
  const { id } = sb.sandbox.control.sendAs(OWNER, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "x",
  });
  await sb.as(OWNER).post(`/messages/${id}/reactions`, { emoji_name: "tada" });
  expect((await messagesOnly.peek()).map((e) => e.type)).toEqual(["message"]);
  expect((await all.peek()).map((e) => e.type)).toEqual(["message", "reaction"]);
});

test("the sender's own queue gets its message; flags follow the client name", async ({ sb }) => {
  const q = await openQueue(sb.as(BOT), { event_types: ["message"] });
  await sb
    .as(BOT, "ZulipTsBot/1.0")
    .post("/messages", { type: "stream", to: "general", topic: "t", content: "bot ua" });
  await sb
    .as(BOT, "ZulipMobile/27.200 (Android 14)")
    .post("/messages", { type: "stream", to: "general", topic: "t", content: "ui" });
  await sb.as(BOT).post("/messages", {
    type: "stream",
    to: "general",
    topic: "t",
    content: "explicit",
    read_by_sender: true,
  });
  const events = await q.peek();
  expect(events.map((e) => e.flags)).toEqual([[], ["read"], ["read"]]);
  expect(events.map((e) => (e.message as { client: string }).client)).toEqual([
    "ZulipTsBot",
    "ZulipMobile",
    "ZulipTsBot",
  ]);
});

test("mentions set the mentioned flag for the mentioned user only", async ({ sb }) => {
  const member = await openQueue(sb.as(MEMBER), { event_types: ["message"] });
  const owner = await openQueue(sb.as(OWNER), { event_types: ["message"] });
  sb.sandbox.control.sendAs(BOT, {
    type: "stream",
    to: "general",
    topic: "t",
    content: "hi @**Mel Member** and `@**Olive Owner**`",
  });
  expect((await member.peek())[0]!.flags).toEqual(["mentioned"]);
  expect((await owner.peek())[0]!.flags).toEqual([]);
});

test("all_public_streams queues get public messages they did not receive, with flags []", async ({ sb }) => {
  const owner = sb.sandbox.control.createUser({
    email: "watcher@sandbox.example",
    full_name: "Watcher",
    bot: "generic",
    owner: OWNER,
  });
  const q = await openQueue(sb.as(owner.email), { event_types: ["message"], all_public_streams: true });
  sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "public" });
  sb.sandbox.control.sendAs(OWNER, { type: "stream", to: "moderation", topic: "t", content: "private" });
  const events = await q.peek();
  expect(events.map((e) => (e.message as { content: string }).content)).toEqual(["public"]);
  expect(events[0]!.flags).toEqual([]);
});

test("a narrowed queue filters messages and also gets matching public messages (server code behaviour)", async ({
  sb,
}) => {
  const newcomer = sb.sandbox.control.createUser({ email: "new@sandbox.example", full_name: "Newt" });
  sb.sandbox.control.createUser({ email: "other@sandbox.example", full_name: "Otto" });
  await sb.as(OWNER).post("/users/me/subscriptions", { subscriptions: [{ name: "lobby" }] });
  const q = await openQueue(sb.as(newcomer.email), {
    event_types: ["message"],
    narrow: [["channel", "GENERAL"]],
  });
  sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "in narrow" });
  sb.sandbox.control.sendAs(OWNER, { type: "stream", to: "lobby", topic: "t", content: "other channel" });
  sb.sandbox.control.sendAs(MEMBER, { type: "private", to: [newcomer.user_id], content: "a dm" });
  const events = await q.peek();
  expect(events.map((e) => (e.message as { content: string }).content)).toEqual(["in narrow"]);
  expect(events[0]!.flags).toEqual([]);
});

test("the empty topic reads as 'general chat' unless the queue declared empty_topic_name", async ({ sb }) => {
  const plain = await openQueue(sb.as(MEMBER), { event_types: ["message"] });
  const capable = await openQueue(sb.as(MEMBER), {
    event_types: ["message"],
    client_capabilities: { notification_settings_null: true, empty_topic_name: true },
  });
  await sb.as(OWNER).post("/messages", { type: "channel", to: "general", topic: "(no topic)", content: "x" });
  expect(((await plain.peek())[0]!.message as { subject: string }).subject).toBe("general chat");
  expect(((await capable.peek())[0]!.message as { subject: string }).subject).toBe("");
});

test("apply_markdown decides between HTML and Markdown content", async ({ sb }) => {
  const md = await openQueue(sb.as(MEMBER), { event_types: ["message"] });
  const html = await openQueue(sb.as(MEMBER), { event_types: ["message"], apply_markdown: true });
  sb.sandbox.control.sendAs(OWNER, { type: "stream", to: "general", topic: "t", content: "**bold**" });
  expect((await md.peek())[0]!.message).toMatchObject({
    content: "**bold**",
    content_type: "text/x-markdown",
  });
  expect((await html.peek())[0]!.message).toMatchObject({
    content: "<p><strong>bold</strong></p>",
    content_type: "text/html",
  });
});

test("local_id echo appears only in the sending queue", async ({ sb }) => {
  const bot = sb.as(BOT);
  const q1 = await openQueue(bot, { event_types: ["message"] });
  const q2 = await openQueue(bot, { event_types: ["message"] });
  await bot.post("/messages", {
    type: "stream",
    to: "general",
    topic: "t",
    content: "x",
    queue_id: q1.id,
    local_id: "100.01",
  });
  expect((await q1.peek())[0]!.local_message_id).toBe("100.01");
  expect((await q2.peek())[0]!.local_message_id).toBeUndefined();
});
