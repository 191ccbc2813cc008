/**
 * Moving a message to another channel, as the server allows it: by an administrator, a member of the
 * realm's `can_move_messages_between_channels_group` (default members, so a member may move another
 * person's message) or the channel's administrator, within `move_messages_between_streams_limit_seconds`
 * of sending (default 7 days, plus 20 s of grace) unless a moderator or above; refusals with the
 * server's body. POST /register states the realm's move settings.
 */
import { describe } from "vitest";
import { defaultOrg } from "../../src/sandbox/org/default-org.ts";
import { BOT, type Caller, expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";

const org = defaultOrg();
const WEEK_MS = 7 * 24 * 60 * 60 * 1000;
const refusal = (msg: string) => ({ status: 400, body: { result: "error", msg, code: "BAD_REQUEST" } });

/** A public channel made by `creator`, with the owner, the member and the bot in it. */
async function channel(creator: Caller, name: string): Promise<number> {
  const reply = await creator.post("/users/me/subscriptions", {
    subscriptions: [{ name }],
    principals: [OWNER, MEMBER, BOT],
  });
  expect(reply.status, reply.text).toBe(200);
  return (await creator.get("/get_stream_id", { stream: name })).body.stream_id as number;
}

/** The realm's move settings in POST /register, with the system groups' ids by name. */
async function moveState(as: Caller) {
  const body = await as.register({ fetch_event_types: ["realm", "realm_user_groups"] });
  const ids = Object.fromEntries(
    (body.realm_user_groups as { id: number; name: string }[]).map((g) => [g.name, g.id]),
  );
  return {
    ids,
    state: {
      channels: body.realm_can_move_messages_between_channels_group,
      topics: body.realm_can_move_messages_between_topics_group,
      channelLimit: body.realm_move_messages_between_streams_limit_seconds,
      topicLimit: body.realm_move_messages_within_stream_limit_seconds,
    },
  };
}

describe("by default", () => {
  test.override({ sandboxOptions: { clock: { now: () => 1_790_000_000_000 } } });

  test("a member moves another person's message to another channel", async ({ sb }) => {
    const c = sb.sandbox.control;
    const kitchen = await channel(sb.as(OWNER), "kitchen");
    const { id } = c.sendAs(OWNER, { type: "stream", to: "general", topic: "t", content: "a" });
    const moved = await sb.as(MEMBER).patch(`/messages/${id}`, { stream_id: kitchen });
    expect({ status: moved.status, result: moved.body.result }).toEqual({ status: 200, result: "success" });
    expect(c.messages().find((m) => m.id === id)!.stream_id).toBe(kitchen);
  });

  test("past 7 days and 20 s a member's move, even of its own message, is refused; an owner's still goes", async ({
    sb,
  }) => {
    const c = sb.sandbox.control;
    const kitchen = await channel(sb.as(OWNER), "kitchen");
    const { id } = c.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "a" });
    c.advanceClock(WEEK_MS + 21_000);
    for (const who of [BOT, MEMBER]) {
      const late = await sb.as(who).patch(`/messages/${id}`, { stream_id: kitchen });
      expect({ status: late.status, body: late.body }).toEqual(
        refusal("The time limit for editing this message's channel has passed"),
      );
    }
    expect((await sb.as(OWNER).patch(`/messages/${id}`, { stream_id: kitchen })).status).toBe(200);
    expect(c.messages().find((m) => m.id === id)!.stream_id).toBe(kitchen);
  });

  test("POST /register states the default groups and limits", async ({ sb }) => {
    const { ids, state } = await moveState(sb.as(BOT));
    expect(state).toEqual({
      channels: ids["role:members"],
      topics: ids["role:everyone"],
      channelLimit: 604800,
      topicLimit: 604800,
    });
  });
});

describe("with the org file's settings", () => {
  test.override({
    sandboxOptions: {
      clock: { now: () => 1_790_000_000_000 },
      org: {
        ...org,
        realm: {
          ...org.realm,
          can_move_messages_between_channels_group: "role:moderators",
          move_messages_between_streams_limit_seconds: null,
          can_move_messages_between_topics_group: "role:administrators",
          move_messages_within_stream_limit_seconds: 60,
        },
      },
    },
  });

  test("only the group or the channel's creator moves messages out of it, with no time limit", async ({
    sb,
  }) => {
    const c = sb.sandbox.control;
    const kitchen = await channel(sb.as(OWNER), "kitchen");
    const { id } = c.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "a" });
    for (const who of [BOT, MEMBER]) {
      const refused = await sb.as(who).patch(`/messages/${id}`, { stream_id: kitchen });
      expect({ status: refused.status, body: refused.body }).toEqual(
        refusal("You don't have permission to move this message"),
      );
    }
    c.advanceClock(4 * WEEK_MS);
    expect((await sb.as(OWNER).patch(`/messages/${id}`, { stream_id: kitchen })).status).toBe(200);
    await channel(sb.as(MEMBER), "pantry");
    const mine = c.sendAs(OWNER, { type: "stream", to: "pantry", topic: "t", content: "b" });
    expect((await sb.as(MEMBER).patch(`/messages/${mine.id}`, { stream_id: kitchen })).status).toBe(200);
    expect(c.messages().find((m) => m.id === mine.id)!.stream_id).toBe(kitchen);
  });

  test("POST /register states the org file's groups and limits", async ({ sb }) => {
    const { ids, state } = await moveState(sb.as(BOT));
    expect(state).toEqual({
      channels: ids["role:moderators"],
      topics: ids["role:administrators"],
      channelLimit: null,
      topicLimit: 60,
    });
  });
});
