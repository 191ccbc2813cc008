import type { OrgInput } from "../../src/testing.ts";
import { openQueue } from "../support/sandbox/events.ts";
import { expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";

const ORG: OrgInput = {
  realm: { moderation_request_channel: null },
  users: [
    { email: "owner@sandbox.example", full_name: "Olive Owner", role: "owner" },
    { email: "member@sandbox.example", full_name: "Mel Member" },
  ],
  channel_folders: [{ name: "Work", description: "Plans & **dates** <b>here</b>" }],
  channels: [
    { name: "general", subscribers: ["owner@sandbox.example", "member@sandbox.example"], is_default: true },
    { name: "vault", privacy: "private", subscribers: ["owner@sandbox.example"], folder: "Work" },
    { name: "old", archived: true },
    { name: "lobby", privacy: "web-public", description: "Everyone is **here**." },
  ],
};

test.override({ sandboxOptions: { org: ORG } });

const names = (body: { streams: { name: string }[] }) => body.streams.map((s) => s.name);

test("GET /streams defaults to public + subscribed, without archived channels", async ({ sb }) => {
  const reply = await sb.as(MEMBER).get("/streams");
  expect(names(reply.body)).toEqual(["general", "lobby"]);
  const vault = (await sb.as(OWNER).get("/streams")).body.streams.find(
    (s: { name: string }) => s.name === "vault",
  );
  expect(vault).toMatchObject({
    invite_only: true,
    history_public_to_subscribers: false,
    folder_id: 1,
    topics_policy: "inherit",
  });
});

test("descriptions are rendered as Markdown, like a message, and escaped", async ({ sb }) => {
  const streams = (await sb.as(OWNER).get("/streams")).body.streams as Record<string, string>[];
  expect(streams.find((s) => s.name === "lobby")).toMatchObject({
    description: "Everyone is **here**.",
    rendered_description: "<p>Everyone is <strong>here</strong>.</p>",
  });
  expect(streams.find((s) => s.name === "general")?.rendered_description).toBe("");
  const folders = (await sb.as(OWNER).get("/channel_folders")).body.channel_folders;
  expect(folders[0]).toMatchObject({
    description: "Plans & **dates** <b>here</b>",
    rendered_description: "<p>Plans &amp; <strong>dates</strong> &lt;b&gt;here&lt;/b&gt;</p>",
  });
});

test("GET /streams flags", async ({ sb }) => {
  const member = sb.as(MEMBER);
  expect(names((await member.get("/streams", { include_public: false })).body)).toEqual(["general"]);
  expect(
    names((await member.get("/streams", { include_public: false, include_subscribed: false })).body),
  ).toEqual([]);
  expect(names((await member.get("/streams", { exclude_archived: false })).body)).toEqual([
    "general",
    "lobby",
    "old",
  ]);
  expect(
    names(
      (
        await member.get("/streams", {
          include_public: false,
          include_subscribed: false,
          include_web_public: true,
        })
      ).body,
    ),
  ).toEqual(["lobby"]);
  expect(
    names(
      (
        await member.get("/streams", {
          include_public: false,
          include_subscribed: false,
          include_default: true,
        })
      ).body,
    ),
  ).toEqual(["general"]);
  expect(names((await sb.as(OWNER).get("/streams", { include_all: true })).body)).toEqual([
    "general",
    "lobby",
    "vault",
  ]);
  const denied = await member.get("/streams", { include_all_active: true });
  expect(denied.body).toEqual({
    result: "error",
    msg: "User not authorized for this query",
    code: "BAD_REQUEST",
  });
});

test("topics: newest first by max_id, the empty topic mapped unless allowed", async ({ sb }) => {
  const c = sb.sandbox.control;
  c.sendAs(MEMBER, { type: "stream", to: "general", topic: "a", content: "1" });
  c.sendAs(MEMBER, { type: "stream", to: "general", topic: "", content: "2" });
  c.sendAs(MEMBER, { type: "stream", to: "general", topic: "A", content: "3" });
  const reply = await sb.as(MEMBER).get("/users/me/1/topics");
  expect(reply.body.topics).toEqual([
    { name: "A", max_id: 3 },
    { name: "general chat", max_id: 2 },
  ]);
  const raw = await sb.as(MEMBER).get("/users/me/1/topics", { allow_empty_topic_name: true });
  expect(raw.body.topics[1]).toEqual({ name: "", max_id: 2 });
});

test("topics of a protected-history private channel: only those after the requester subscribed", async ({
  sb,
}) => {
  const c = sb.sandbox.control;
  c.sendAs(OWNER, { type: "stream", to: "vault", topic: "before", content: "1" });
  const noAccess = await sb.as(MEMBER).get("/users/me/2/topics");
  expect(noAccess.body).toEqual({ result: "error", msg: "Invalid channel ID", code: "BAD_REQUEST" });
  await sb
    .as(OWNER)
    .post("/users/me/subscriptions", { subscriptions: [{ name: "vault" }], principals: [MEMBER] });
  c.sendAs(OWNER, { type: "stream", to: "vault", topic: "after", content: "2" });
  expect((await sb.as(MEMBER).get("/users/me/2/topics")).body.topics).toEqual([{ name: "after", max_id: 2 }]);
  expect(
    (await sb.as(OWNER).get("/users/me/2/topics")).body.topics.map((t: { name: string }) => t.name),
  ).toEqual(["after", "before"]);
  expect((await sb.as(MEMBER).get("/users/me/99/topics")).body.msg).toBe("Invalid channel ID");
});

test("GET /get_stream_id and /streams/{id}/members", async ({ sb }) => {
  expect((await sb.as(MEMBER).get("/get_stream_id", { stream: "general" })).body.stream_id).toBe(1);
  expect((await sb.as(MEMBER).get("/streams/1/members")).body.subscribers).toHaveLength(2);
});

test("PATCH /streams/{id} renames a channel: a stream update event to who can see it, as the server sends", async ({
  sb,
}) => {
  const member = await openQueue(sb.as(MEMBER), { event_types: ["stream"] });
  // vault is private, the member not subscribed: told nothing of its rename.
  expect((await sb.as(MEMBER).patch("/streams/1", { new_name: "lounge" })).body).toEqual({
    result: "error",
    msg: "You do not have permission to administer this channel.",
    code: "BAD_REQUEST",
  });
  // Another channel's name (in any case): the server's 409, naming the channel asked for.
  const taken = await sb.as(OWNER).patch("/streams/1", { new_name: "Lobby " });
  expect([taken.status, taken.body]).toEqual([
    409,
    {
      result: "error",
      msg: "Channel 'Lobby' already exists",
      code: "CHANNEL_ALREADY_EXISTS",
      channel_name: "Lobby",
    },
  ]);
  expect((await sb.as(OWNER).patch("/streams/1", { new_name: " general" })).body).toEqual({
    result: "error",
    msg: "Channel already has that name.",
    code: "BAD_REQUEST",
  });
  expect((await sb.as(OWNER).patch("/streams/1", { new_name: "lounge" })).status).toBe(200);
  await sb.as(OWNER).patch("/streams/2", { new_name: "safe" });
  expect(await member.peek()).toEqual([
    { type: "stream", op: "update", stream_id: 1, name: "general", property: "name", value: "lounge", id: 0 },
  ]);
  expect((await sb.as(MEMBER).get("/get_stream_id", { stream: "lounge" })).body.stream_id).toBe(1);
  expect((await sb.as(MEMBER).get("/get_stream_id", { stream: "general" })).body.msg).toBe(
    "Invalid channel name 'general'",
  );
});
