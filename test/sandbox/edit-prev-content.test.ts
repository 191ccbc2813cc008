/**
 * PATCH /messages/{id} with `prev_content_sha256` (feature level 379): the SHA-256 of the raw
 * content the client last read; the server refuses the edit when the message's stored content
 * hashes otherwise (another edit came first), and before level 379 reports the parameter ignored.
 */
import { createHash } from "node:crypto";
import { defaultOrg } from "../../src/sandbox/org/default-org.ts";
import { expect, MEMBER, type SandboxFixture, test } from "../support/sandbox/fixture.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const STALE = {
  result: "error",
  msg: "'prev_content_sha256' value does not match the expected value.",
  code: "BAD_REQUEST",
};

/** The member's message `content` in general > t, and its edits and reads as the member. */
function posted(sb: SandboxFixture, content: string) {
  const { id } = sb.sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "t", content });
  const member = sb.as(MEMBER);
  return {
    edit: (form: Record<string, string>) => member.patch(`/messages/${id}`, form),
    read: () => member.get(`/messages/${id}`, { apply_markdown: false }),
  };
}

test("the first of two edits from the same read is made; the second is refused and changes nothing", async ({
  sb,
}) => {
  const { edit, read } = posted(sb, "Init");
  const hash = sha256("Init");
  expect((await edit({ content: "First edit", prev_content_sha256: hash })).status).toBe(200);
  const second = await edit({ content: "Second edit", prev_content_sha256: hash });
  expect({ status: second.status, body: second.body }).toEqual({ status: 400, body: STALE });
  // A topic move with a stale hash is refused too.
  expect((await edit({ topic: "elsewhere", prev_content_sha256: hash })).body).toEqual(STALE);
  const { message } = (await read()).body;
  expect([message.content, message.subject]).toEqual(["First edit", "t"]);
  // The hash of what is stored now is accepted.
  expect((await edit({ content: "Third edit", prev_content_sha256: sha256("First edit") })).status).toBe(200);
});

test("a message the caller cannot see is refused as such first", async ({ sb }) => {
  const reply = await sb.as(MEMBER).patch("/messages/999999", { content: "x", prev_content_sha256: "00" });
  expect(reply.body).toMatchObject({ result: "error", msg: "Invalid message(s)" });
});

test.describe("before feature level 379", () => {
  const org = defaultOrg();
  test.override({ sandboxOptions: { org: { ...org, realm: { ...org.realm, feature_level: 378 } } } });

  test("the parameter is unknown: ignored, and reported as such", async ({ sb }) => {
    const reply = await posted(sb, "a").edit({ content: "b", prev_content_sha256: sha256("stale") });
    expect(reply.status).toBe(200);
    expect(reply.body.ignored_parameters_unsupported).toEqual(["prev_content_sha256"]);
  });
});
