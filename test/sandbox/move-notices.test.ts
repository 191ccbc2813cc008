/**
 * The Notification Bot's notices of a move, as the server posts them: in the new topic unless
 * `send_notification_to_new_thread` is false, in the old one when `send_notification_to_old_thread`
 * is true, worded by whether the whole topic moved and how many messages did, read for the mover
 * alone.
 */
import { defaultOrg } from "../../src/sandbox/org/default-org.ts";
import { expect, MEMBER, OWNER, type SandboxFixture, test } from "../support/sandbox/fixture.ts";

const org = defaultOrg();
test.override({ sandboxOptions: { org } });

const idOf = (sb: SandboxFixture, email: string) =>
  sb.sandbox.control.users().find((u) => u.email === email)!.user_id;
const send = (sb: SandboxFixture, topic: string) =>
  sb.sandbox.control.sendAs(OWNER, { type: "stream", to: "general", topic, content: "a" }).id;
/** Notices posted after the messages `ids`, as [topic, content]. */
const noticesAfter = (sb: SandboxFixture, last: number) =>
  sb.sandbox.control
    .messages()
    .filter((m) => (m.id as number) > last)
    .map((m) => [m.topic, m.content]);

test("a whole topic moved: one notice in the new topic, read for the mover only", async ({ sb }) => {
  const ids = [send(sb, "t"), send(sb, "t")];
  const moved = await sb
    .as(MEMBER)
    .patch(`/messages/${ids[0]}`, { topic: "u", propagate_mode: "change_all" });
  expect(moved.status, moved.text).toBe(200);
  const mel = `@_**Mel Member|${idOf(sb, MEMBER)}**`;
  expect(noticesAfter(sb, ids[1]!)).toEqual([
    ["u", `This topic was moved here from #**general>t** by ${mel}.`],
  ]);
  const flags = sb.sandbox.control.messages().at(-1)!.flags as Record<string, string[]>;
  expect(flags[String(idOf(sb, MEMBER))]).toContain("read");
  expect(flags[String(idOf(sb, OWNER))]).not.toContain("read");
});

test("one message of several moved, with the old topic told too", async ({ sb }) => {
  const ids = [send(sb, "t"), send(sb, "t")];
  const general = (await sb.as(OWNER).get("/get_stream_id", { stream: "general" })).body.stream_id as number;
  const moved = await sb
    .as(MEMBER)
    .patch(`/messages/${ids[1]}`, { topic: "a>b", send_notification_to_old_thread: true });
  expect(moved.status, moved.text).toBe(200);
  const mel = `@_**Mel Member|${idOf(sb, MEMBER)}**`;
  const link = `${sb.sandbox.url}/#narrow/channel/${general}-general/topic/a.3Eb/near/${ids[1]}`;
  expect(noticesAfter(sb, ids[1]!)).toEqual([
    ["a>b", `[A message](${link}) was moved here from #**general>t** by ${mel}.`],
    [
      "t",
      `A message was moved from this topic to [#general > a&gt;b](#narrow/channel/${general}-general/topic/a.3Eb) by ${mel}.`,
    ],
  ]);
});

test("several moved into a topic that has messages; none when the new thread is not to be told", async ({
  sb,
}) => {
  const ids = [send(sb, "t"), send(sb, "t"), send(sb, "t"), send(sb, "u")];
  const later = await sb.as(MEMBER).patch(`/messages/${ids[1]}`, {
    topic: "u",
    propagate_mode: "change_later",
    send_notification_to_old_thread: true,
  });
  expect(later.status, later.text).toBe(200);
  const mel = `@_**Mel Member|${idOf(sb, MEMBER)}**`;
  expect(noticesAfter(sb, ids[3]!)).toEqual([
    ["u", `2 messages were moved here from #**general>t** by ${mel}.`],
    ["t", `2 messages were moved from this topic to #**general>u** by ${mel}.`],
  ]);
  const before = sb.sandbox.control.messages().length;
  const quiet = await sb
    .as(MEMBER)
    .patch(`/messages/${ids[0]}`, { topic: "v", send_notification_to_new_thread: false });
  expect(quiet.status, quiet.text).toBe(200);
  expect(sb.sandbox.control.messages()).toHaveLength(before);
});
