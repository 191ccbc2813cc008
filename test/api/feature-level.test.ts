import { describe, expect } from "vitest";
import type { Client } from "../../src/api/create-client.ts";
import { UnsupportedFeatureError } from "../../src/api/errors.ts";
import { test } from "../support/api/client-fixture.ts";
import * as rec from "../support/api/records.ts";
import { success } from "../support/api/test-server.ts";

interface AdaptRow {
  name: string;
  featureLevel: number | undefined;
  call: (c: Client) => Promise<unknown>;
  sent: Record<string, string>;
}

const channelSend = (c: Client) => c.messages.send({ type: "channel", to: 5, topic: "t", content: "c" });
const directSend = (c: Client) => c.messages.send({ type: "direct", to: [3], content: "c" });
const scheduled = (type: "channel" | "direct") => (c: Client) =>
  c.scheduledMessages.create({
    type,
    to: type === "channel" ? 5 : [3],
    content: "c",
    scheduled_delivery_timestamp: 2e9,
  });
const channelTyping = (c: Client) => c.typing.set({ op: "start", type: "channel", stream_id: 5, topic: "t" });
const directTyping = (c: Client) => c.typing.set({ op: "start", type: "direct", to: [3] });

const adaptations: AdaptRow[] = [
  {
    name: "channel → stream before FL 248",
    featureLevel: 247,
    call: channelSend,
    sent: { type: "stream", to: "5", topic: "t", content: "c" },
  },
  {
    name: "channel kept from FL 248",
    featureLevel: 248,
    call: channelSend,
    sent: { type: "channel", to: "5", topic: "t", content: "c" },
  },
  {
    name: "direct → private before FL 174",
    featureLevel: 173,
    call: directSend,
    sent: { type: "private", to: "[3]", content: "c" },
  },
  {
    name: "direct kept from FL 174",
    featureLevel: 174,
    call: directSend,
    sent: { type: "direct", to: "[3]", content: "c" },
  },
  {
    name: "unknown level sends the modern form",
    featureLevel: undefined,
    call: channelSend,
    sent: { type: "channel", to: "5", topic: "t", content: "c" },
  },
  {
    name: "scheduled channel → stream before FL 248",
    featureLevel: 200,
    call: scheduled("channel"),
    sent: { type: "stream", to: "5", content: "c", scheduled_delivery_timestamp: "2000000000" },
  },
  {
    name: "scheduled direct → private before FL 174 (never true: scheduling needs 179, so direct stays)",
    featureLevel: 179,
    call: scheduled("direct"),
    sent: { type: "direct", to: "[3]", content: "c", scheduled_delivery_timestamp: "2000000000" },
  },
  {
    name: "channel typing before FL 215: to=[stream_id], type stream, topic",
    featureLevel: 214,
    call: channelTyping,
    sent: { type: "stream", op: "start", to: "[5]", topic: "t" },
  },
  {
    name: "channel typing from FL 215 before 248: stream_id with type stream",
    featureLevel: 230,
    call: channelTyping,
    sent: { type: "stream", op: "start", stream_id: "5", topic: "t" },
  },
  {
    name: "channel typing from FL 248",
    featureLevel: 248,
    call: channelTyping,
    sent: { type: "channel", op: "start", stream_id: "5", topic: "t" },
  },
  {
    name: "direct typing before FL 174: private",
    featureLevel: 173,
    call: directTyping,
    sent: { type: "private", op: "start", to: "[3]" },
  },
  {
    name: "direct typing from FL 174",
    featureLevel: 174,
    call: directTyping,
    sent: { type: "direct", op: "start", to: "[3]" },
  },
  {
    name: "playground url_template → url_prefix before FL 196",
    featureLevel: 195,
    call: (c) =>
      c.realm.createPlayground({
        name: "P",
        pygments_language: "Python",
        url_template: "https://p.example/?c={code}",
      }),
    sent: { name: "P", pygments_language: "Python", url_prefix: "https://p.example/?c=" },
  },
  {
    name: "channels include_all → include_all_active before FL 356",
    featureLevel: 355,
    call: (c) => c.channels.list({ include_all: true }),
    sent: { include_all_active: "true" },
  },
  {
    name: "user-group updates by a bot from FL 496",
    featureLevel: 496,
    call: (c) => {
      c.isBot = true;
      return c.userGroups.updateMembers(7, { add: [1] });
    },
    sent: { add: "[1]" },
  },
  {
    name: "user-group updates by a non-bot before FL 496",
    featureLevel: 400,
    call: (c) => {
      c.isBot = false;
      return c.userGroups.updateMembers(7, { add: [1] });
    },
    sent: { add: "[1]" },
  },
];

describe("requests adapt to the server's feature level", () => {
  test.for(adaptations)("$name", async (row, { server, makeClient }) => {
    const client = makeClient(row.featureLevel === undefined ? {} : { featureLevel: row.featureLevel });
    // One body that satisfies every endpoint these rows call.
    server.reply(success({ id: 1, scheduled_message_id: 1, streams: [] }));
    await row.call(client);
    const req = server.requests[0]!;
    expect(req.method === "GET" ? req.query : req.body).toEqual(row.sent);
  });
});

interface RefuseRow {
  name: string;
  featureLevel: number;
  isBot?: boolean;
  call: (c: Client) => Promise<unknown>;
  feature: string;
  requiredLevel: number;
}

const refusals: RefuseRow[] = [
  {
    name: "scheduled messages before 179",
    featureLevel: 178,
    call: scheduled("channel"),
    feature: "scheduledMessages",
    requiredLevel: 179,
  },
  {
    name: "scheduled list before 179",
    featureLevel: 100,
    call: (c) => c.scheduledMessages.list(),
    feature: "scheduledMessages",
    requiredLevel: 179,
  },
  {
    name: "scheduled edit before 184",
    featureLevel: 183,
    call: (c) => c.scheduledMessages.update(1, { content: "x" }),
    feature: "scheduledMessagesEditEndpoint",
    requiredLevel: 184,
  },
  {
    name: "saved snippets before 297",
    featureLevel: 296,
    call: (c) => c.savedSnippets.create({ title: "t", content: "c" }),
    feature: "savedSnippets",
    requiredLevel: 297,
  },
  {
    name: "saved snippet edit before 368",
    featureLevel: 367,
    call: (c) => c.savedSnippets.update(1, { title: "t" }),
    feature: "savedSnippetsEdit",
    requiredLevel: 368,
  },
  {
    name: "message report before 382",
    featureLevel: 381,
    call: (c) => c.messages.report(1, { report_type: "spam" }),
    feature: "messageReport",
    requiredLevel: 382,
  },
  {
    name: "channel folders before 389",
    featureLevel: 388,
    call: (c) => c.channelFolders.create({ name: "f" }),
    feature: "channelFolders",
    requiredLevel: 389,
  },
  {
    name: "playgrounds before 49",
    featureLevel: 48,
    call: (c) =>
      c.realm.createPlayground({ name: "p", pygments_language: "py", url_template: "https://x/{code}" }),
    feature: "playgrounds",
    requiredLevel: 49,
  },
  {
    name: "playground template with {code} in the middle before 196",
    featureLevel: 150,
    call: (c) =>
      c.realm.createPlayground({ name: "p", pygments_language: "py", url_template: "https://x/{code}/run" }),
    feature: "playgroundUrlTemplate",
    requiredLevel: 196,
  },
  {
    name: "subgroups endpoint before 127",
    featureLevel: 126,
    call: (c) => c.userGroups.updateSubgroups(1, { add: [2] }),
    feature: "userGroupSubgroupsEndpoint",
    requiredLevel: 127,
  },
  {
    name: "subgroup parameters before 311",
    featureLevel: 310,
    call: (c) => c.userGroups.updateMembers(1, { add_subgroups: [2] }),
    feature: "userGroupMembersSubgroupParams",
    requiredLevel: 311,
  },
  {
    name: "bot updating members before 496",
    featureLevel: 495,
    isBot: true,
    call: (c) => c.userGroups.updateMembers(1, { add: [2] }),
    feature: "userGroupBotsAllowed",
    requiredLevel: 496,
  },
  {
    name: "bot updating subgroups before 496",
    featureLevel: 495,
    isBot: true,
    call: (c) => c.userGroups.updateSubgroups(1, { add: [2] }),
    feature: "userGroupBotsAllowed",
    requiredLevel: 496,
  },
  {
    name: "channel typing before 58",
    featureLevel: 57,
    call: channelTyping,
    feature: "typingToChannel",
    requiredLevel: 58,
  },
  {
    name: "user by placeholder email before 39",
    featureLevel: 38,
    call: (c) => c.users.get("user12@chat.example.org"),
    feature: "usersByEmail",
    requiredLevel: 39,
  },
  {
    name: "user by real email before 302",
    featureLevel: 301,
    call: (c) => c.users.get("ada@example.org"),
    feature: "usersByRealEmail",
    requiredLevel: 302,
  },
];

describe("calls the server is too old for raise UnsupportedFeatureError without a request", () => {
  test.for(refusals)("$name", async (row, { server, makeClient }) => {
    const client = makeClient({
      featureLevel: row.featureLevel,
      ...(row.isBot === undefined ? {} : { isBot: row.isBot }),
    });
    const err = await row.call(client).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsupportedFeatureError);
    expect(err).toMatchObject({
      code: "UNSUPPORTED_FEATURE",
      feature: row.feature,
      requiredLevel: row.requiredLevel,
      serverLevel: row.featureLevel,
    });
    expect((err as Error).message).toContain(
      `needs server feature level ${row.requiredLevel} or newer (feature "${row.feature}"), but the server has feature level ${row.featureLevel}.`,
    );
    expect(server.requests).toHaveLength(0);
  });

  test("the message names the call, both levels and the fix", async ({ makeClient }) => {
    const err = await makeClient({ featureLevel: 300 })
      .channelFolders.create({ name: "f" })
      .catch((e: unknown) => e);
    expect((err as Error).message).toMatchInlineSnapshot(
      `"Creating a channel folder (POST /channel_folders/create) needs server feature level 389 or newer (feature "channelFolders"), but the server has feature level 300. Upgrade the server or avoid this call."`,
    );
  });
});

describe("the client learns the feature level", () => {
  test("from events.register", async ({ server, makeClient }) => {
    const client = makeClient();
    expect(client.featureLevel).toBeUndefined();
    server.reply(success({ ...rec.registerResponse, zulip_feature_level: 200 }), success({ id: 1 }));
    await client.events.register({ event_types: ["message"] });
    expect(client.featureLevel).toBe(200);
    await channelSend(client);
    expect(server.requests[1]!.body.type).toBe("stream");
  });

  test("from server.settings, sent without credentials", async ({ server, makeClient }) => {
    const client = makeClient();
    server.reply(success({ zulip_version: "7.0", zulip_feature_level: 185 }));
    await client.server.settings();
    expect(client.featureLevel).toBe(185);
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
  });

  test("from a restart event", async ({ server, makeClient }) => {
    const client = makeClient({ featureLevel: 300 });
    server.reply(
      success({ events: [{ id: 4, type: "restart", zulip_feature_level: 310, zulip_version: "9.0" }] }),
    );
    await client.events.get({ queue_id: "q", last_event_id: 3 });
    expect(client.featureLevel).toBe(310);
  });

  test("whether it is a bot, from users.me", async ({ server, makeClient }) => {
    const client = makeClient({ featureLevel: 400 });
    server.reply(success(rec.ownUser));
    await client.users.me();
    expect(client.isBot).toBe(true);
    await expect(client.userGroups.updateMembers(1, { add: [2] })).rejects.toBeInstanceOf(
      UnsupportedFeatureError,
    );
  });

  test("set by hand", ({ makeClient }) => {
    const client = makeClient();
    client.featureLevel = 120;
    expect(client.featureLevel).toBe(120);
  });
});
