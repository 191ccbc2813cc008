/**
 * Resolving a topic (a move to "✔ " + its name) and unresolving it, as the server handles them:
 * its own permission (`can_resolve_topics_group` of the realm, default everyone, or of the
 * channel), no time limit, no whole-topic time check, and a Notification Bot notice in the topic,
 * read for everyone but people who asked otherwise, taken back by an undo within a minute.
 */
import { describe } from "vitest";
import { defaultOrg } from "../../src/sandbox/org/default-org.ts";
import { BOT, expect, MEMBER, OWNER, type SandboxFixture, test } from "../support/sandbox/fixture.ts";

const org = defaultOrg();
const DAY_MS = 24 * 60 * 60 * 1000;

const idOf = (sb: SandboxFixture, email: string) =>
  sb.sandbox.control.users().find((u) => u.email === email)!.user_id;
describe("by default", () => {
  test.override({ sandboxOptions: { clock: { now: () => 1_790_000_000_000 } } });

  test("a member resolves a topic older than the move limit, whole; the notice is read", async ({ sb }) => {
    const c = sb.sandbox.control;
    const ids = [1, 2].map(
      (n) => c.sendAs(OWNER, { type: "stream", to: "general", topic: "t", content: `${n}` }).id,
    );
    c.advanceClock(8 * DAY_MS);
    const resolved = await sb
      .as(MEMBER)
      .patch(`/messages/${ids[1]}`, { topic: "✔ t", propagate_mode: "change_all" });
    expect(resolved.status, resolved.text).toBe(200);
    expect(ids.map((id) => c.messages().find((m) => m.id === id)!.topic)).toEqual(["✔ t", "✔ t"]);
    const notice = c.messages().at(-1)!;
    expect({ topic: notice.topic, content: notice.content }).toEqual({
      topic: "✔ t",
      content: `@_**Mel Member|${idOf(sb, MEMBER)}** has marked this topic as resolved.`,
    });
    const flags = notice.flags as Record<string, string[]>;
    for (const who of [OWNER, MEMBER, BOT]) expect(flags[String(idOf(sb, who))]).toContain("read");
    // A plain rename of the same old topic is still past the limit.
    const renamed = await sb.as(MEMBER).patch(`/messages/${ids[0]}`, { topic: "other" });
    expect(renamed.body.msg).toBe("The time limit for editing this message's topic has passed.");
  });

  test("an unresolve within a minute takes the notice back; later, it is a notice of its own", async ({
    sb,
  }) => {
    const c = sb.sandbox.control;
    const { id } = c.sendAs(OWNER, { type: "stream", to: "general", topic: "t", content: "a" });
    const bot = sb.as(BOT);
    expect((await bot.patch(`/messages/${id}`, { topic: "✔ t", propagate_mode: "change_all" })).status).toBe(
      200,
    );
    expect(c.messages()).toHaveLength(2);
    expect((await bot.patch(`/messages/${id}`, { topic: "t", propagate_mode: "change_all" })).status).toBe(
      200,
    );
    expect(c.messages().map((m) => m.id)).toEqual([id]);
    expect((await bot.patch(`/messages/${id}`, { topic: "✔ t", propagate_mode: "change_all" })).status).toBe(
      200,
    );
    c.advanceClock(61_000);
    expect((await bot.patch(`/messages/${id}`, { topic: "t", propagate_mode: "change_all" })).status).toBe(
      200,
    );
    expect(c.messages().map((m) => [m.topic, m.content])).toEqual([
      ["t", "a"],
      ["t", `@_**Sandbox Bot|${idOf(sb, BOT)}** has marked this topic as resolved.`],
      ["t", `@_**Sandbox Bot|${idOf(sb, BOT)}** has marked this topic as unresolved.`],
    ]);
  });

  test("a resolve that also moves the message to another channel, or edits it, posts no resolve notice", async ({
    sb,
  }) => {
    const c = sb.sandbox.control;
    const made = await sb.as(OWNER).post("/users/me/subscriptions", {
      subscriptions: [{ name: "done" }],
      principals: [OWNER, MEMBER, BOT],
    });
    expect(made.status, made.text).toBe(200);
    const done = (await sb.as(OWNER).get("/get_stream_id", { stream: "done" })).body.stream_id as number;
    const moved = c.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "a" }).id;
    const edited = c.sendAs(MEMBER, { type: "stream", to: "general", topic: "u", content: "a" }).id;
    expect((await sb.as(MEMBER).patch(`/messages/${moved}`, { topic: "✔ t", stream_id: done })).status).toBe(
      200,
    );
    expect((await sb.as(MEMBER).patch(`/messages/${edited}`, { topic: "✔ u", content: "b" })).status).toBe(
      200,
    );
    // The move to another channel is noticed as a move there, not as a resolve.
    expect(c.messages().map((m) => [m.topic, m.content])).toEqual([
      ["✔ t", "a"],
      ["✔ u", "b"],
      ["✔ t", `This topic was moved here from #**general>t** by @_**Mel Member|${idOf(sb, MEMBER)}**.`],
    ]);
  });

  test("the empty topic cannot be resolved", async ({ sb }) => {
    const { id } = sb.sandbox.control.sendAs(OWNER, {
      type: "stream",
      to: "general",
      topic: "",
      content: "a",
    });
    const refused = await sb.as(MEMBER).patch(`/messages/${id}`, { topic: "✔ general chat" });
    expect({ status: refused.status, msg: refused.body.msg }).toEqual({
      status: 400,
      msg: "General chat cannot be marked as resolved",
    });
  });

  test("registration and the channel state who may resolve", async ({ sb }) => {
    const body = await sb.as(MEMBER).register({ fetch_event_types: ["realm", "realm_user_groups"] });
    const ids = Object.fromEntries(
      (body.realm_user_groups as { id: number; name: string }[]).map((g) => [g.name, g.id]),
    );
    expect(body.realm_can_resolve_topics_group).toBe(ids["role:everyone"]);
    const streams = (await sb.as(MEMBER).get("/streams")).body.streams as Record<string, unknown>[];
    expect(streams.find((s) => s.name === "general")!.can_resolve_topics_group).toBe(ids["role:nobody"]);
  });
});

describe("with the realm's resolvers set to nobody and one channel's to the member", () => {
  test.override({
    sandboxOptions: {
      org: {
        ...org,
        realm: { ...org.realm, can_resolve_topics_group: "role:nobody" },
        channels: [
          ...org.channels!,
          { name: "help", subscribers: [OWNER, MEMBER, BOT], can_resolve_topics_group: [MEMBER] },
        ],
      },
    },
  });

  test("resolving is refused, renaming is not; in the member's channel it resolves", async ({ sb }) => {
    const c = sb.sandbox.control;
    const inGeneral = c.sendAs(OWNER, { type: "stream", to: "general", topic: "t", content: "a" }).id;
    const inHelp = c.sendAs(OWNER, { type: "stream", to: "help", topic: "t", content: "a" }).id;
    const refused = await sb.as(MEMBER).patch(`/messages/${inGeneral}`, { topic: "✔ t" });
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 400,
      body: {
        result: "error",
        msg: "You don't have permission to resolve topics in this channel.",
        code: "BAD_REQUEST",
      },
    });
    expect((await sb.as(MEMBER).patch(`/messages/${inGeneral}`, { topic: "✔ other" })).status).toBe(200);
    expect((await sb.as(MEMBER).patch(`/messages/${inHelp}`, { topic: "✔ t" })).status).toBe(200);
    expect((await sb.as(BOT).patch(`/messages/${inHelp}`, { topic: "t" })).status).toBe(400);
  });
});
