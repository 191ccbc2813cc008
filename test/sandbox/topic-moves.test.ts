/**
 * Moving a message to another topic of its channel, as the server allows it: by a member of the
 * realm's `can_move_messages_between_topics_group` (default everyone, so a member may move another
 * person's message), within `move_messages_within_stream_limit_seconds` of sending (default 7 days,
 * plus the server's 20 s of grace) unless a moderator or above; refusals with the server's body.
 */
import { describe } from "vitest";
import { defaultOrg } from "../../src/sandbox/org/default-org.ts";
import { BOT, expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";

const org = defaultOrg();
const WEEK_MS = 7 * 24 * 60 * 60 * 1000;
const refusal = (msg: string) => ({ status: 400, body: { result: "error", msg, code: "BAD_REQUEST" } });

describe("by default", () => {
  test.override({ sandboxOptions: { clock: { now: () => 1_790_000_000_000 } } });

  test("a member moves another person's message to another topic", async ({ sb }) => {
    const c = sb.sandbox.control;
    const { id } = c.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "a" });
    const moved = await sb.as(BOT).patch(`/messages/${id}`, { topic: "elsewhere" });
    expect({ status: moved.status, result: moved.body.result }).toEqual({ status: 200, result: "success" });
    expect(c.messages().find((m) => m.id === id)!.topic).toBe("elsewhere");
  });

  test("a whole-topic move takes the topic's messages whatever the case of their topic", async ({ sb }) => {
    const c = sb.sandbox.control;
    const ids = ["t", "T"].map(
      (topic) => c.sendAs(MEMBER, { type: "stream", to: "general", topic, content: "a" }).id,
    );
    const moved = await sb.as(BOT).patch(`/messages/${ids[0]}`, { topic: "u", propagate_mode: "change_all" });
    expect(moved.status, moved.text).toBe(200);
    expect(ids.map((id) => c.messages().find((m) => m.id === id)!.topic)).toEqual(["u", "u"]);
  });

  test("a whole topic moved to another channel leaves the messages the mover cannot read", async ({ sb }) => {
    const c = sb.sandbox.control;
    const old = c.sendAs(OWNER, { type: "stream", to: "moderation", topic: "t", content: "before" }).id;
    const added = await sb
      .as(OWNER)
      .post("/users/me/subscriptions", { subscriptions: [{ name: "moderation" }], principals: [MEMBER] });
    expect(added.status, added.text).toBe(200);
    const seen = c.sendAs(OWNER, { type: "stream", to: "moderation", topic: "t", content: "after" }).id;
    const general = (await sb.as(MEMBER).get("/get_stream_id", { stream: "general" })).body
      .stream_id as number;
    const moved = await sb
      .as(MEMBER)
      .patch(`/messages/${seen}`, { stream_id: general, propagate_mode: "change_all" });
    expect(moved.status, moved.text).toBe(200);
    const streamOf = (id: number) => c.messages().find((m) => m.id === id)!.stream_id;
    expect([streamOf(old), streamOf(seen)]).toEqual([streamOf(old), general]);
    expect(streamOf(old)).not.toBe(general);
  });

  test("past 7 days and 20 s a member's move is refused; an owner's still goes", async ({ sb }) => {
    const c = sb.sandbox.control;
    const { id } = c.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "a" });
    c.advanceClock(WEEK_MS + 20_000);
    const inTime = await sb.as(BOT).patch(`/messages/${id}`, { topic: "u" });
    expect(inTime.status).toBe(200);
    c.advanceClock(1_000);
    for (const who of [BOT, MEMBER]) {
      const late = await sb.as(who).patch(`/messages/${id}`, { topic: "v" });
      expect({ status: late.status, body: late.body }).toEqual(
        refusal("The time limit for editing this message's topic has passed."),
      );
    }
    expect((await sb.as(OWNER).patch(`/messages/${id}`, { topic: "w" })).status).toBe(200);
    expect(c.messages().find((m) => m.id === id)!.topic).toBe("w");
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
          can_move_messages_between_topics_group: "role:moderators",
          move_messages_within_stream_limit_seconds: null,
        },
      },
    },
  });

  test("only the group moves messages between topics, with no time limit", async ({ sb }) => {
    const c = sb.sandbox.control;
    const { id } = c.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "a" });
    for (const who of [BOT, MEMBER]) {
      const refused = await sb.as(who).patch(`/messages/${id}`, { topic: "u" });
      expect({ status: refused.status, body: refused.body }).toEqual(
        refusal("You don't have permission to edit this message"),
      );
    }
    c.advanceClock(4 * WEEK_MS);
    expect((await sb.as(OWNER).patch(`/messages/${id}`, { topic: "u" })).status).toBe(200);
    expect(c.messages().find((m) => m.id === id)!.topic).toBe("u");
  });
});
