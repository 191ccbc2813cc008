import { openQueue } from "../support/sandbox/events.ts";
import { BOT, expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";

test("subscribing creates missing channels and reports by user id", async ({ sb }) => {
  const q = await openQueue(sb.as(BOT), { event_types: ["subscription", "stream"] });
  const botId = sb.sandbox.control.users().find((u) => u.email === BOT)!.user_id;
  const reply = await sb.as(BOT).post("/users/me/subscriptions", {
    subscriptions: [{ name: "general" }, { name: "bots", description: "Bot chatter" }],
  });
  expect(reply.status).toBe(200);
  expect(reply.body).toEqual({
    result: "success",
    msg: "",
    subscribed: { [botId]: ["bots"] },
    already_subscribed: { [botId]: ["general"] },
  });
  const events = await q.peek();
  expect(events.map((e) => `${e.type}/${e.op}`)).toEqual(["stream/create", "subscription/add"]);
  expect((events[1]!.subscriptions as { name: string; subscribers: number[] }[])[0]).toMatchObject({
    name: "bots",
    subscribers: [botId],
    description: "Bot chatter",
  });
});

test("others see peer_add and peer_remove", async ({ sb }) => {
  const q = await openQueue(sb.as(OWNER), { event_types: ["subscription"] });
  const c = sb.sandbox.control;
  const newcomer = c.createUser({ email: "n@sandbox.example", full_name: "N" });
  await sb.as(newcomer.email).post("/users/me/subscriptions", { subscriptions: [{ name: "general" }] });
  const removed = await sb
    .as(newcomer.email)
    .delete("/users/me/subscriptions", { subscriptions: ["general"] });
  expect(removed.body).toEqual({ result: "success", msg: "", removed: ["general"], not_removed: [] });
  const again = await sb.as(newcomer.email).delete("/users/me/subscriptions", { subscriptions: ["general"] });
  expect(again.body.not_removed).toEqual(["general"]);
  expect((await q.peek()).map((e) => [e.op, e.user_ids])).toEqual([
    ["peer_add", [newcomer.user_id]],
    ["peer_remove", [newcomer.user_id]],
  ]);
});

test("a private channel cannot be joined without access", async ({ sb }) => {
  const reply = await sb
    .as(MEMBER)
    .post("/users/me/subscriptions", { subscriptions: [{ name: "moderation" }] });
  expect(reply.body).toEqual({
    result: "error",
    msg: "Unable to access channel (moderation).",
    code: "BAD_REQUEST",
  });
  const soft = await sb.as(MEMBER).post("/users/me/subscriptions", {
    subscriptions: [{ name: "moderation" }],
    authorization_errors_fatal: false,
  });
  expect(soft.body.unauthorized).toEqual(["moderation"]);
});

test("GET /users/me/subscriptions lists the user's channels, subscribers on request", async ({ sb }) => {
  const plain = await sb.as(OWNER).get("/users/me/subscriptions");
  expect(plain.body.subscriptions.map((s: { name: string }) => s.name)).toEqual(["general", "moderation"]);
  expect(plain.body.subscriptions[0].subscribers).toBeUndefined();
  const full = await sb.as(OWNER).get("/users/me/subscriptions", { include_subscribers: true });
  expect(full.body.subscriptions[0].subscribers).toHaveLength(3);
});

test("removing a channel that does not exist is an error", async ({ sb }) => {
  const reply = await sb.as(MEMBER).delete("/users/me/subscriptions", { subscriptions: ["nowhere"] });
  expect(reply.body.msg).toBe("Channel(s) (nowhere) do not exist");
});
