/**
 * Moving a whole topic (`propagate_mode: change_all`) below moderators, as the server checks it:
 * every message of the topic must be within the move's time limit, not only the one named;
 * otherwise 400 MOVE_MESSAGES_TIME_LIMIT_EXCEEDED says how many of the most recent may move and
 * from which id, and a `change_later` move from that id goes.
 */
import { describe } from "vitest";
import { defaultOrg } from "../../src/sandbox/org/default-org.ts";
import {
  BOT,
  type Caller,
  expect,
  MEMBER,
  OWNER,
  type SandboxFixture,
  test,
} from "../support/sandbox/fixture.ts";

const org = defaultOrg();
const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

/** Three messages in general > "t", a week and a minute ago, then two more now; their ids in order. */
function oldAndNewTopic(sb: SandboxFixture): number[] {
  const c = sb.sandbox.control;
  const send = (content: string) =>
    c.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content }).id;
  const ids = [send("1"), send("2"), send("3")];
  c.advanceClock(WEEK_MS + 60_000);
  return [...ids, send("4"), send("5")];
}

const topicOf = (sb: SandboxFixture, id: number) =>
  sb.sandbox.control.messages().find((m) => m.id === id)!.topic;

async function kitchen(owner: Caller): Promise<number> {
  const reply = await owner.post("/users/me/subscriptions", {
    subscriptions: [{ name: "kitchen" }],
    principals: [OWNER, MEMBER, BOT],
  });
  expect(reply.status, reply.text).toBe(200);
  return (await owner.get("/get_stream_id", { stream: "kitchen" })).body.stream_id as number;
}

const exceeded = (first: number) => ({
  status: 400,
  body: {
    result: "error",
    msg: "You only have permission to move the 2/5 most recent messages in this topic.",
    code: "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED",
    first_message_id_allowed_to_move: first,
    total_messages_in_topic: 5,
    total_messages_allowed_to_move: 2,
  },
});

describe("by default (7 days for topics and channels)", () => {
  test.override({ sandboxOptions: { clock: { now: () => 1_790_000_000_000 } } });

  test("a member's change_all of a topic with old messages is refused; change_later from the id given goes", async ({
    sb,
  }) => {
    const ids = oldAndNewTopic(sb);
    const refused = await sb
      .as(MEMBER)
      .patch(`/messages/${ids[4]}`, { topic: "u", propagate_mode: "change_all" });
    expect({ status: refused.status, body: refused.body }).toEqual(exceeded(ids[3]!));
    expect(ids.map((id) => topicOf(sb, id))).toEqual(["t", "t", "t", "t", "t"]);

    const first = refused.body.first_message_id_allowed_to_move as number;
    const later = await sb
      .as(MEMBER)
      .patch(`/messages/${first}`, { topic: "u", propagate_mode: "change_later" });
    expect(later.status, later.text).toBe(200);
    expect(ids.map((id) => topicOf(sb, id))).toEqual(["t", "t", "t", "u", "u"]);
  });

  test("the same holds for a move of the whole topic to another channel", async ({ sb }) => {
    const to = await kitchen(sb.as(OWNER));
    const ids = oldAndNewTopic(sb);
    const refused = await sb
      .as(BOT)
      .patch(`/messages/${ids[3]}`, { stream_id: to, propagate_mode: "change_all" });
    expect({ status: refused.status, body: refused.body }).toEqual(exceeded(ids[3]!));
  });

  test("a moderator or above moves the whole topic", async ({ sb }) => {
    const ids = oldAndNewTopic(sb);
    const moved = await sb
      .as(OWNER)
      .patch(`/messages/${ids[4]}`, { topic: "u", propagate_mode: "change_all" });
    expect(moved.status, moved.text).toBe(200);
    expect(ids.map((id) => topicOf(sb, id))).toEqual(["u", "u", "u", "u", "u"]);
  });
});

describe("with no time limit for topic moves", () => {
  test.override({
    sandboxOptions: {
      clock: { now: () => 1_790_000_000_000 },
      org: { ...org, realm: { ...org.realm, move_messages_within_stream_limit_seconds: null } },
    },
  });

  test("a member's change_all to another topic moves every message; to another channel the channel's limit holds", async ({
    sb,
  }) => {
    const to = await kitchen(sb.as(OWNER));
    const ids = oldAndNewTopic(sb);
    const elsewhere = await sb
      .as(MEMBER)
      .patch(`/messages/${ids[4]}`, { stream_id: to, topic: "u", propagate_mode: "change_all" });
    expect({ status: elsewhere.status, body: elsewhere.body }).toEqual(exceeded(ids[3]!));
    const moved = await sb
      .as(MEMBER)
      .patch(`/messages/${ids[4]}`, { topic: "u", propagate_mode: "change_all" });
    expect(moved.status, moved.text).toBe(200);
    expect(ids.map((id) => topicOf(sb, id))).toEqual(["u", "u", "u", "u", "u"]);
  });
});
