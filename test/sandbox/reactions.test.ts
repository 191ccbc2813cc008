/**
 * Reactions as the server handles them: POST/DELETE /messages/{id}/reactions with its checks in
 * its order and its error codes, the `reaction` event (with the deprecated `user` object) to the
 * queues that take `reaction` events and can see the message, and the message's `reactions`.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe } from "vitest";
import { EMOJI_CODES } from "../../src/sandbox/state/emoji.ts";
import { repoRoot } from "../support/cli.ts";
import { openQueue } from "../support/sandbox/events.ts";
import { BOT, expect, MEMBER, OWNER, type SandboxFixture, test } from "../support/sandbox/fixture.ts";

const ADA = "ada@sandbox.example";
const ORG = {
  realm: { name: "Sandbox", host: "sandbox.example" },
  users: [
    { email: OWNER, full_name: "Olive Owner", role: "owner" as const },
    { email: MEMBER, full_name: "Mel Member" },
    { email: ADA, full_name: "Ada" },
  ],
  bots: [{ email: BOT, full_name: "Sandbox Bot", type: "generic" as const, owner: OWNER }],
  channels: [
    { name: "general", subscribers: [OWNER, MEMBER, BOT] },
    { name: "lounge", subscribers: [OWNER, ADA] },
    {
      name: "secret",
      privacy: "private" as const,
      history_public_to_subscribers: false,
      subscribers: [OWNER, MEMBER],
    },
  ],
};
test.override({ sandboxOptions: { org: ORG } });

/** A message `from` posts to #general (the sandbox's own code path, as POST /messages). */
const inGeneral = (sb: SandboxFixture, from: string) =>
  sb.sandbox.control.sendAs(from, { type: "stream", to: "general", topic: "t", content: "a" });

const error = (msg: string, code = "BAD_REQUEST") => ({ result: "error", msg, code });

describe("adding", () => {
  test("by name: the event to everyone who can see the message, and the message's reactions", async ({
    sb,
  }) => {
    const member = await openQueue(sb.as(MEMBER), { event_types: ["reaction"] });
    const onlyMessages = await openQueue(sb.as(OWNER), { event_types: ["message"] });
    const outsider = await openQueue(sb.as(ADA), { event_types: ["reaction"] });
    const { id } = inGeneral(sb, MEMBER);
    const added = await sb.as(BOT).post(`/messages/${id}/reactions`, { emoji_name: "tada" });
    expect([added.status, added.body]).toEqual([200, { result: "success", msg: "" }]);
    const botId = sb.sandbox.control.users().find((u) => u.email === BOT)!.user_id;
    expect(await member.peek()).toEqual([
      {
        type: "reaction",
        op: "add",
        user_id: botId,
        user: { user_id: botId, email: BOT, full_name: "Sandbox Bot" },
        message_id: id,
        emoji_name: "tada",
        emoji_code: "1f389",
        reaction_type: "unicode_emoji",
        id: 0,
      },
    ]);
    // The owner's queue takes no reaction events; Ada is not in #general.
    expect((await onlyMessages.peek()).filter((e) => e.type === "reaction")).toEqual([]);
    expect(await outsider.peek()).toEqual([]);
    const fetched = await sb.as(MEMBER).get(`/messages/${id}`);
    expect(fetched.body.message.reactions).toEqual([
      { emoji_name: "tada", emoji_code: "1f389", reaction_type: "unicode_emoji", user_id: botId },
    ]);
  });

  test("the same reaction twice is REACTION_ALREADY_EXISTS; the same emoji by another person is a vote that keeps the first name", async ({
    sb,
  }) => {
    const { id } = inGeneral(sb, OWNER);
    expect((await sb.as(MEMBER).post(`/messages/${id}/reactions`, { emoji_name: "+1" })).status).toBe(200);
    const again = await sb.as(MEMBER).post(`/messages/${id}/reactions`, { emoji_name: "thumbs_up" });
    expect([again.status, again.body]).toEqual([
      400,
      error("Reaction already exists.", "REACTION_ALREADY_EXISTS"),
    ]);
    expect((await sb.as(BOT).post(`/messages/${id}/reactions`, { emoji_name: "like" })).status).toBe(200);
    const names = sb.sandbox.control.messageView(id)?.reactions as { emoji_name: string }[];
    expect(names.map((r) => r.emoji_name)).toEqual(["+1", "+1"]);
  });

  test("an emoji whose name, code and type do not agree is refused", async ({ sb }) => {
    const { id } = inGeneral(sb, OWNER);
    const bot = sb.as(BOT);
    const tries: [Record<string, string>, string][] = [
      [{ emoji_name: "no_such_emoji" }, "Emoji 'no_such_emoji' does not exist"],
      [{ emoji_name: "tada", emoji_code: "ffff1", reaction_type: "unicode_emoji" }, "Invalid emoji code"],
      [{ emoji_name: "tada", emoji_code: "1f44d", reaction_type: "unicode_emoji" }, "Invalid emoji name"],
      [{ emoji_name: "party", emoji_code: "7", reaction_type: "realm_emoji" }, "Invalid custom emoji"],
      [
        { emoji_name: "zulip", emoji_code: "zulip2", reaction_type: "zulip_extra_emoji" },
        "Invalid emoji code",
      ],
      [{ emoji_name: "tada", emoji_code: "1f389", reaction_type: "sticker" }, "Invalid emoji type"],
    ];
    for (const [form, msg] of tries) {
      const reply = await bot.post(`/messages/${id}/reactions`, form);
      expect([form, reply.status, reply.body]).toEqual([form, 400, error(msg)]);
    }
    const missing = await bot.post(`/messages/${id}/reactions`, { emoji_code: "1f389" });
    expect(missing.body).toEqual({
      ...error("Missing 'emoji_name' argument", "REQUEST_VARIABLE_MISSING"),
      var_name: "emoji_name",
    });
  });

  test("a code without a type, or a type without a code: only the missing one comes from the name", async ({
    sb,
  }) => {
    const { id } = inGeneral(sb, OWNER);
    const bot = sb.as(BOT);
    const tries: [Record<string, string>, string][] = [
      [{ emoji_name: "zulip", emoji_code: "x" }, "Invalid emoji code"],
      [{ emoji_name: "tada", emoji_code: "1f44d" }, "Invalid emoji name"],
      [{ emoji_name: "tada", reaction_type: "zulip_extra_emoji" }, "Invalid emoji code"],
    ];
    for (const [form, msg] of tries) {
      const reply = await bot.post(`/messages/${id}/reactions`, form);
      expect([form, reply.status, reply.body]).toEqual([form, 400, error(msg)]);
    }
    expect(
      (await bot.post(`/messages/${id}/reactions`, { emoji_name: "zulip", emoji_code: "zulip" })).status,
    ).toBe(200);
    expect(sb.sandbox.control.messageView(id)?.reactions).toMatchObject([
      { emoji_name: "zulip", emoji_code: "zulip", reaction_type: "zulip_extra_emoji" },
    ]);
  });

  test("a message the user cannot see is Invalid message(s), before the emoji is looked at", async ({
    sb,
  }) => {
    const dm = sb.sandbox.control.sendAs(OWNER, { type: "direct", to: [MEMBER], content: "psst" }).id;
    for (const emoji_name of ["tada", "no_such_emoji"]) {
      const reply = await sb.as(BOT).post(`/messages/${dm}/reactions`, { emoji_name });
      expect([reply.status, reply.body]).toEqual([400, error("Invalid message(s)")]);
    }
    const removed = await sb.as(BOT).delete(`/messages/${dm}/reactions`, { emoji_name: "tada" });
    expect(removed.body).toEqual(error("Invalid message(s)"));
    const later = sb.sandbox.control.sendAs(OWNER, {
      type: "stream",
      to: "secret",
      topic: "t",
      content: "x",
    });
    // Ada is in no way in #secret; the member joined before this message, so holds it.
    const refused = await sb.as(ADA).post(`/messages/${later.id}/reactions`, { emoji_name: "tada" });
    expect(refused.body).toEqual(error("Invalid message(s)"));
  });

  test("reacting to a channel message one did not receive makes its later events reach them", async ({
    sb,
  }) => {
    // The member is not in #lounge but, as a member, may read a public channel's messages.
    const { id } = sb.sandbox.control.sendAs(ADA, {
      type: "stream",
      to: "lounge",
      topic: "t",
      content: "hi",
    });
    const member = await openQueue(sb.as(MEMBER), { event_types: ["reaction", "update_message"] });
    expect((await sb.as(MEMBER).post(`/messages/${id}/reactions`, { emoji_name: "wave" })).status).toBe(200);
    expect((await sb.as(ADA).post(`/messages/${id}/reactions`, { emoji_name: "eyes" })).status).toBe(200);
    expect((await sb.as(ADA).patch(`/messages/${id}`, { content: "hello" })).status).toBe(200);
    const seen = (await member.peek()).map((e) => [e.type, e.op ?? "", e.emoji_name ?? ""]);
    expect(seen).toEqual([
      ["reaction", "add", "wave"],
      ["reaction", "add", "eyes"],
      ["update_message", "", ""],
    ]);
  });
});

describe("removing", () => {
  test("by name or by code; one not there is REACTION_DOES_NOT_EXIST; the event carries the stored name", async ({
    sb,
  }) => {
    const member = await openQueue(sb.as(MEMBER), { event_types: ["reaction"] });
    const { id } = inGeneral(sb, MEMBER);
    const bot = sb.as(BOT);
    await bot.post(`/messages/${id}/reactions`, { emoji_name: "+1" });
    await bot.post(`/messages/${id}/reactions`, { emoji_name: "zulip" });
    const neither = await bot.delete(`/messages/${id}/reactions`, {});
    expect(neither.body).toEqual(
      error("At least one of the following arguments must be present: emoji_name, emoji_code"),
    );
    // By name alone the type is unicode_emoji: the extra emoji needs its type.
    const untyped = await bot.delete(`/messages/${id}/reactions`, { emoji_name: "zulip" });
    expect([untyped.status, untyped.body]).toEqual([
      400,
      error("Reaction doesn't exist.", "REACTION_DOES_NOT_EXIST"),
    ]);
    const typed = { emoji_name: "zulip", reaction_type: "zulip_extra_emoji" };
    expect((await bot.delete(`/messages/${id}/reactions`, typed)).status).toBe(200);
    // By another name of the same emoji, or by its code alone.
    expect((await bot.delete(`/messages/${id}/reactions`, { emoji_code: "1f44d" })).status).toBe(200);
    const gone = await bot.delete(`/messages/${id}/reactions`, { emoji_name: "thumbs_up" });
    expect(gone.body).toEqual(error("Reaction doesn't exist.", "REACTION_DOES_NOT_EXIST"));
    const unknown = await bot.delete(`/messages/${id}/reactions`, { emoji_name: "no_such_emoji" });
    expect(unknown.body).toEqual(error("Emoji 'no_such_emoji' does not exist"));
    const removes = (await member.peek()).filter((e) => e.op === "remove");
    expect(removes.map((e) => [e.emoji_name, e.emoji_code, e.reaction_type])).toEqual([
      ["zulip", "zulip", "zulip_extra_emoji"],
      ["+1", "1f44d", "unicode_emoji"],
    ]);
    expect(sb.sandbox.control.messageView(id)?.reactions).toEqual([]);
  });

  test("only one's own reaction", async ({ sb }) => {
    const { id } = inGeneral(sb, MEMBER);
    await sb.as(OWNER).post(`/messages/${id}/reactions`, { emoji_name: "heart" });
    const other = await sb.as(MEMBER).delete(`/messages/${id}/reactions`, { emoji_name: "heart" });
    expect(other.body).toEqual(error("Reaction doesn't exist.", "REACTION_DOES_NOT_EXIST"));
    expect(sb.sandbox.control.messageView(id)?.reactions).toHaveLength(1);
  });
});

test("the emoji names docs/reference/sandbox.md gives as examples are the sandbox's", async () => {
  const doc = await readFile(path.join(repoRoot, "docs/reference/sandbox.md"), "utf8");
  const listed =
    /The emoji known are part of the server's names .*?any other name is refused as unknown/.exec(
      doc.replace(/\s+/g, " "),
    );
  const names = [...(listed?.[0] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");
  expect(names).toEqual(["+1", "smile", "check", "x", "pizza", "coffee", "100", "zulip"]);
  for (const name of names.filter((n) => n !== "zulip"))
    expect(Object.hasOwn(EMOJI_CODES, name), name).toBe(true);
});

test("the emoji data the register response names: each code with its names, read without credentials", async ({
  sb,
}) => {
  const reg = await sb.as(BOT).post("/register", { fetch_event_types: JSON.stringify(["realm"]) });
  const url = (reg.body as { server_emoji_data_url: string }).server_emoji_data_url;
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const { code_to_names } = (await res.json()) as { code_to_names: Record<string, string[]> };
  expect(code_to_names["1f44d"]).toEqual(["+1", "thumbs_up", "like"]);
  expect(code_to_names["274c"]).toEqual(["cross_mark", "incorrect", "wrong"]);
  expect(code_to_names["274e"]).toEqual(["x"]);
  expect(code_to_names["1f642"]).toEqual(["smile"]);
  expect(code_to_names["23f3"]).toEqual(["time_ticking", "hourglass"]);
  expect(Object.values(code_to_names).flat().sort()).toEqual(Object.keys(EMOJI_CODES).sort());
});
