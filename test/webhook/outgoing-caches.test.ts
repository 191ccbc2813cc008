/**
 * An outgoing-webhook bot keeps no queue, so no `user_group` event keeps its groups current: it
 * reads them at its start, and again once they are a minute old, before a delivery (see the
 * approvals bot's webhook-mode test) and before a cron job's run, here.
 */
import { defineBot } from "bothost";
import { createBotTest, expect } from "bothost/testing/vitest";
import { addToGroup } from "../support/group-members.ts";

const OWNER = "owner@sandbox.example";
const MEMBER = "member@sandbox.example";
const test = createBotTest({
  org: {
    realm: { name: "Sandbox", host: "sandbox.example" },
    users: [
      { email: OWNER, full_name: "Olive Owner", role: "owner" },
      { email: MEMBER, full_name: "Mel Member" },
    ],
    channels: [{ name: "general", subscribers: [OWNER, MEMBER] }],
    user_groups: [{ name: "eng", members: [MEMBER] }],
  },
});

const counter = defineBot({
  setup(bot) {
    bot.track("groups");
    bot.cron("* * * * *", async (ctx) => {
      const n = ctx.groups.members("eng")?.length ?? 0;
      await ctx.send({ type: "channel", to: "general", topic: "eng", content: `eng has ${n}` });
    });
  },
});

test("a cron job of an outgoing-webhook bot sees a member added to a group once its groups are a minute old", async ({
  runBot,
  sandbox,
  clock,
}) => {
  const bot = await runBot({ bot: counter, name: "counter", outgoingWebhook: true });
  await addToGroup(sandbox, "eng", OWNER, OWNER);
  const said = () => bot.replies().map((m) => m.content);
  // The first run comes within a minute of the start: the groups read then are still fresh.
  await clock.advance(60_000);
  await expect.poll(said).toEqual(["eng has 1"]);
  // The next, a minute later: read again first.
  await clock.advance(60_000);
  await expect.poll(said).toEqual(["eng has 1", "eng has 2"]);
});
