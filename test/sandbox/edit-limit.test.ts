/**
 * The organization's message edit time limit (`message_content_edit_limit_seconds` in the org
 * file): reported at registration, and past it (plus the server's 20 s of grace) the sender's
 * content edit is refused as the real server refuses it; a topic move is not a content edit.
 */
import { defaultOrg } from "../../src/sandbox/org/default-org.ts";
import { expect, MEMBER, test } from "../support/sandbox/fixture.ts";

const org = defaultOrg();
test.override({
  sandboxOptions: {
    clock: { now: () => 1_790_000_000_000 },
    org: { ...org, realm: { ...org.realm, message_content_edit_limit_seconds: 60 } },
  },
});

test("registration reports the limit", async ({ sb }) => {
  const body = await sb.as(MEMBER).register({ fetch_event_types: ["realm"] });
  expect(body.realm_message_content_edit_limit_seconds).toBe(60);
});

test("a content edit within the limit and the server's 20 s of grace is made; past them, refused; a topic move still goes", async ({
  sb,
}) => {
  const c = sb.sandbox.control;
  const member = sb.as(MEMBER);
  const { id } = c.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content: "v1" });
  c.advanceClock(80_000);
  expect((await member.patch(`/messages/${id}`, { content: "v2" })).status).toBe(200);
  c.advanceClock(1_000);
  const late = await member.patch(`/messages/${id}`, { content: "v3" });
  expect(late.status).toBe(400);
  expect(late.body).toEqual({
    result: "error",
    msg: "The time limit for editing this message has passed",
    code: "BAD_REQUEST",
  });
  // Checked even when the content given is the same.
  expect((await member.patch(`/messages/${id}`, { content: "v2" })).body.msg).toBe(
    "The time limit for editing this message has passed",
  );
  expect(c.messages().find((m) => m.id === id)!.content).toBe("v2");
  expect((await member.patch(`/messages/${id}`, { topic: "moved" })).status).toBe(200);
});
