import {
  BOT,
  expect,
  fixtureFor,
  MEMBER,
  OWNER,
  recordingSandbox,
  test,
} from "../support/sandbox/fixture.ts";

const mention = (name: string, id: number) => `@_**${name}|${id}**`;
const FIXED = 1_700_000_040_000;
test.override({ sandboxOptions: { clock: { now: () => FIXED } } });
const TIME = "<time:2023-11-14T22:14:00+00:00>";

function ids(sb: { sandbox: { control: { users(): { email: string; user_id: number }[] } } }) {
  return Object.fromEntries(sb.sandbox.control.users().map((u) => [u.email, u.user_id]));
}

test("a channel message report is posted by the Notification Bot with the exact format", async ({ sb }) => {
  const id = ids(sb);
  const { id: msgId } = sb.sandbox.control.sendAs(MEMBER, {
    type: "stream",
    to: "general",
    topic: "deals",
    content: "buy now",
  });
  const reply = await sb
    .as(OWNER)
    .post(`/messages/${msgId}/report`, { report_type: "spam", description: "obvious spam" });
  expect(reply.body).toEqual({ result: "success", msg: "" });
  const report = sb.sandbox.control.messages().at(-1)!;
  expect(report).toMatchObject({ topic: "Mel Member moderation", stream_id: 2 });
  expect(report.content).toBe(
    `${mention("Olive Owner", id[OWNER]!)} reported a message sent by ${mention("Mel Member", id[MEMBER]!)} at ${TIME}.\n` +
      "```quote\n**Spam**. obvious spam\n```\n\n" +
      `\`\`\` spoiler Original message at #**general>deals@${msgId}**\nbuy now\n\`\`\``,
  );
});

test("reporting one's own 1:1 DM names the recipient; the fence grows past inner fences", async ({ sb }) => {
  const id = ids(sb);
  const { id: msgId } = sb.sandbox.control.sendAs(OWNER, {
    type: "direct",
    to: [id[MEMBER]!],
    content: "look:\n```\ncode\n```",
  });
  await sb.as(OWNER).post(`/messages/${msgId}/report`, { report_type: "other", description: "testing" });
  const sorted = [id[OWNER]!, id[MEMBER]!].sort((a, b) => a - b).join(",");
  expect(sb.sandbox.control.messages().at(-1)!.content).toBe(
    `${mention("Olive Owner", id[OWNER]!)} reported a direct message sent by ${mention("Olive Owner", id[OWNER]!)} to ${mention("Mel Member", id[MEMBER]!)} at ${TIME}.\n` +
      "```quote\n**Other reason**. testing\n```\n\n" +
      `\`\`\`\` spoiler [Original message](${sb.sandbox.url}/#narrow/dm/${sorted}/near/${msgId})\nlook:\n\`\`\`\ncode\n\`\`\`\n\`\`\`\``,
  );
});

test("a group DM report lists the other recipients", async ({ sb }) => {
  const id = ids(sb);
  const c = sb.sandbox.control;
  const extra = c.createUser({ email: "zed@sandbox.example", full_name: "Zed" });
  const { id: msgId } = c.sendAs(MEMBER, {
    type: "direct",
    to: [id[OWNER]!, id[BOT]!, extra.user_id],
    content: "hi all",
  });
  await sb.as(OWNER).post(`/messages/${msgId}/report`, { report_type: "norms" });
  const others = [
    mention("Olive Owner", id[OWNER]!),
    mention("Sandbox Bot", id[BOT]!),
    mention("Zed", extra.user_id),
  ].sort();
  const content = c.messages().at(-1)!.content as string;
  expect(content.split("\n")[0]).toBe(
    `${mention("Olive Owner", id[OWNER]!)} reported a direct message sent by ${mention("Mel Member", id[MEMBER]!)} to ${others[0]}, ${others[1]}, and ${others[2]} at ${TIME}.`,
  );
  expect(content).toContain("**Violates community norms**. \n```");
  expect(content).toContain(
    `/#narrow/dm/${[id[OWNER]!, id[MEMBER]!, id[BOT]!, extra.user_id].sort((a, b) => a - b).join(",")}-group/near/${msgId}`,
  );
});

test("checks run in the server's order", async ({ sb }) => {
  const other = await sb.as(OWNER).post("/messages/999/report", { report_type: "other" });
  expect(other.body).toEqual({ result: "error", msg: "An explanation is required.", code: "BAD_REQUEST" });
  const missing = await sb.as(OWNER).post("/messages/999/report", { report_type: "spam" });
  expect(missing.body).toEqual({ result: "error", msg: "Invalid message(s)", code: "BAD_REQUEST" });
  const badType = await sb.as(OWNER).post("/messages/999/report", { report_type: "rude" });
  expect(badType.body.msg).toBe("Invalid report_type"); // Only an empty description is missing (the server does not strip it): spaces pass this check.
  const spaces = await sb.as(OWNER).post("/messages/999/report", { report_type: "other", description: "  " });
  expect(spaces.body.msg).toBe("Invalid message(s)");
});

test("without a moderation request channel, reporting is disabled", async () => {
  const sandbox = await recordingSandbox({
    org: {
      users: [{ email: "a@x.example", full_name: "A", role: "owner" }],
      channels: [{ name: "general", subscribers: ["a@x.example"] }],
    },
  });
  try {
    const sb = fixtureFor(sandbox);
    const { id } = sandbox.control.sendAs("a@x.example", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "x",
    });
    const reply = await sb.as("a@x.example").post(`/messages/${id}/report`, { report_type: "spam" });
    expect(reply.body).toEqual({
      result: "error",
      msg: "Message reporting is not enabled in this organization.",
      code: "BAD_REQUEST",
    });
  } finally {
    await sandbox.stop();
  }
});
