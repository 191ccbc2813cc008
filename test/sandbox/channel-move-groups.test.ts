/**
 * A channel's own move permissions, as the server applies them besides the realm's: its
 * administrators (`can_administer_channel_group`, by default its creator) and its
 * `can_move_messages_within_channel_group` (of the source or the target channel) may move messages
 * to another topic, its administrators and `can_move_messages_out_of_channel_group` to another
 * channel. The org file sets them and GET /streams states them.
 */
import { describe } from "vitest";
import { defaultOrg } from "../../src/sandbox/org/default-org.ts";
import { BOT, expect, MEMBER, OWNER, type SandboxFixture, test } from "../support/sandbox/fixture.ts";

const org = defaultOrg();
const everyone = [OWNER, MEMBER, BOT];
const refusal = (msg: string) => ({ status: 400, body: { result: "error", msg, code: "BAD_REQUEST" } });

const send = (sb: SandboxFixture, to: string) =>
  sb.sandbox.control.sendAs(OWNER, { type: "stream", to, topic: "t", content: "a" }).id;
const stored = (sb: SandboxFixture, id: number) => sb.sandbox.control.messages().find((m) => m.id === id)!;
const streamId = async (sb: SandboxFixture, name: string) =>
  (await sb.as(OWNER).get("/get_stream_id", { stream: name })).body.stream_id as number;

describe("with the realm's movers set to nobody and the channels' own groups set", () => {
  test.override({
    sandboxOptions: {
      org: {
        ...org,
        realm: {
          ...org.realm,
          can_move_messages_between_topics_group: "role:nobody",
          can_move_messages_between_channels_group: "role:nobody",
          moderation_request_channel: null,
        },
        channels: [
          {
            name: "general",
            subscribers: everyone,
            can_move_messages_within_channel_group: [MEMBER],
            can_move_messages_out_of_channel_group: [BOT],
          },
          { name: "kitchen", subscribers: everyone, can_administer_channel_group: [BOT] },
        ],
      },
    },
  });

  test("GET /streams states each channel's groups", async ({ sb }) => {
    const users = sb.sandbox.control.users();
    const idOf = (email: string) => users.find((u) => u.email === email)!.user_id;
    const streams = (await sb.as(OWNER).get("/streams")).body.streams as Record<string, unknown>[];
    const general = streams.find((s) => s.name === "general")!;
    const kitchen = streams.find((s) => s.name === "kitchen")!;
    expect(general.can_move_messages_within_channel_group).toEqual({
      direct_members: [idOf(MEMBER)],
      direct_subgroups: [],
    });
    expect(general.can_move_messages_out_of_channel_group).toEqual({
      direct_members: [idOf(BOT)],
      direct_subgroups: [],
    });
    expect(kitchen.can_administer_channel_group).toEqual({
      direct_members: [idOf(BOT)],
      direct_subgroups: [],
    });
  });

  test("the within-channel group moves between topics of its channel only", async ({ sb }) => {
    const inGeneral = send(sb, "general");
    const inKitchen = send(sb, "kitchen");
    const moved = await sb.as(MEMBER).patch(`/messages/${inGeneral}`, { topic: "u" });
    expect(moved.status, moved.text).toBe(200);
    expect(stored(sb, inGeneral).topic).toBe("u");
    const refused = await sb.as(MEMBER).patch(`/messages/${inKitchen}`, { topic: "u" });
    expect({ status: refused.status, body: refused.body }).toEqual(
      refusal("You don't have permission to edit this message"),
    );
  });

  test("the channel's administrator moves between its topics and renames it", async ({ sb }) => {
    const inKitchen = send(sb, "kitchen");
    const moved = await sb.as(BOT).patch(`/messages/${inKitchen}`, { topic: "u" });
    expect(moved.status, moved.text).toBe(200);
    const renamed = await sb
      .as(BOT)
      .patch(`/streams/${await streamId(sb, "kitchen")}`, { new_name: "pantry" });
    expect(renamed.status, renamed.text).toBe(200);
  });

  test("the out-of-channel group moves out of its channel only", async ({ sb }) => {
    const kitchen = await streamId(sb, "kitchen");
    const general = await streamId(sb, "general");
    const inGeneral = send(sb, "general");
    const refused = await sb.as(MEMBER).patch(`/messages/${inGeneral}`, { stream_id: kitchen });
    expect({ status: refused.status, body: refused.body }).toEqual(
      refusal("You don't have permission to move this message"),
    );
    const moved = await sb.as(BOT).patch(`/messages/${inGeneral}`, { stream_id: kitchen });
    expect(moved.status, moved.text).toBe(200);
    expect(stored(sb, inGeneral).stream_id).toBe(kitchen);
    const back = await sb.as(MEMBER).patch(`/messages/${inGeneral}`, { stream_id: general });
    expect(back.status).toBe(400);
  });
});

describe("with only moderators moving between topics", () => {
  test.override({
    sandboxOptions: {
      org: { ...org, realm: { ...org.realm, can_move_messages_between_topics_group: "role:moderators" } },
    },
  });

  test("a channel's creator moves between its topics; in another channel it may not", async ({ sb }) => {
    const made = await sb.as(MEMBER).post("/users/me/subscriptions", { subscriptions: [{ name: "mine" }] });
    expect(made.status, made.text).toBe(200);
    const inMine = sb.sandbox.control.sendAs(MEMBER, {
      type: "stream",
      to: "mine",
      topic: "t",
      content: "a",
    }).id;
    const moved = await sb.as(MEMBER).patch(`/messages/${inMine}`, { topic: "u" });
    expect(moved.status, moved.text).toBe(200);
    const refused = await sb.as(MEMBER).patch(`/messages/${send(sb, "general")}`, { topic: "u" });
    expect(refused.status).toBe(400);
  });

  test("a move into a channel the mover administers may change the topic too", async ({ sb }) => {
    const made = await sb.as(BOT).post("/users/me/subscriptions", {
      subscriptions: [{ name: "bots" }],
      principals: everyone,
    });
    expect(made.status, made.text).toBe(200);
    const inGeneral = send(sb, "general");
    const moved = await sb
      .as(BOT)
      .patch(`/messages/${inGeneral}`, { stream_id: await streamId(sb, "bots"), topic: "u" });
    expect(moved.status, moved.text).toBe(200);
    expect(stored(sb, inGeneral).topic).toBe("u");
  });
});
