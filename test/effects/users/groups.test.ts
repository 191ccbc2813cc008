/**
 * `ctx.groups` (members from the bot's cache, kept current by user_group events) and the client's
 * user-group calls, against the sandbox over HTTP: GET /user_groups typed, and a refused
 * POST /user_groups/{id}/members as a GroupPermissionError that says what to change.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createClient } from "../../../src/api/create-client.ts";
import { ApiError, GroupPermissionError } from "../../../src/api/errors.ts";
import { defineBot } from "../../../src/bot/define-bot.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { OrgInput, Sandbox } from "../../../src/sandbox/types.ts";
import { runBot, type TestBot } from "../../../src/testing/run-bot.ts";

const OWNER = "owner@sandbox.example";
const ANN = "ann@sandbox.example";
const BEN = "ben@sandbox.example";
const CY = "cy@sandbox.example";
const BOT = "team-bot@sandbox.example";
const ORG: OrgInput = {
  realm: { name: "Sandbox", host: "sandbox.example" },
  users: [
    { email: OWNER, full_name: "Olive Owner", role: "owner" },
    { email: ANN, full_name: "Ann" },
    { email: BEN, full_name: "Ben" },
    { email: CY, full_name: "Cy" },
  ],
  bots: [{ email: BOT, full_name: "Team", type: "generic", owner: OWNER }],
  channels: [{ name: "general", subscribers: [OWNER, ANN, BEN, CY, BOT], is_default: true }],
  user_groups: [
    { name: "oncall", members: [CY] },
    { name: "Standup", members: [ANN], subgroups: ["oncall"] },
    { name: "open", members: [], can_add_members_group: [BOT] },
  ],
};

const team = defineBot({
  setup(bot) {
    bot.track("groups");
    bot.command("team", { args: { group: z.string() } }, async (ctx) => {
      const ids = ctx.groups.members(ctx.args.group);
      if (ids === undefined) {
        await ctx.reply(`no group ${ctx.args.group}`);
        return;
      }
      const names = await Promise.all(ids.map(async (id) => (await ctx.users.get(id))?.full_name));
      await ctx.reply(`${ctx.args.group}: ${names.join(", ") || "nobody"}`);
    });
    bot.command("join", { args: { group: z.string() } }, async (ctx) => {
      const id = ctx.groups.idOf(ctx.args.group)!;
      try {
        await ctx.api.userGroups.updateMembers(id, { add: [ctx.sender.id] });
        await ctx.reply("added");
      } catch (err) {
        if (!(err instanceof GroupPermissionError)) throw err;
        await ctx.reply(`refused (group ${err.groupId}, ${err.code}): ${err.fix}`);
      }
    });
  },
});

let sandbox: Sandbox;
let bot: TestBot;
beforeEach(async () => {
  sandbox = await startSandbox({ org: ORG });
  bot = await runBot(sandbox, { bot: team, name: "team", email: BOT });
});
afterEach(async () => {
  await bot.stop();
  await sandbox.stop();
});

const dm = async (from: string, content: string) =>
  (await bot.ask(from, { type: "direct", to: [BOT], content })).content;
const client = (email: string) =>
  createClient({ url: sandbox.url, email, apiKey: sandbox.control.apiKeyOf(email) });
const idOf = (email: string) => sandbox.control.users().find((u) => u.email === email)!.user_id;

describe("ctx.groups.members", () => {
  it("lists a group's members by name, subgroups' members included, from the cache", async () => {
    expect(await dm(BEN, "team standup")).toBe("standup: Ann, Cy");
    expect(await dm(BEN, "team oncall")).toBe("oncall: Cy");
    expect(await dm(BEN, "team nope")).toBe("no group nope");
    const calls = sandbox.control.requests.filter(
      (r) => r.email === BOT && r.path.startsWith("/user_groups"),
    );
    expect(calls).toEqual([]);
  });

  it("leaves a deactivated member out, as the server lists groups since feature level 303, from the next registration", async () => {
    sandbox.control.setActive(ANN, false);
    const { user_groups } = await client(OWNER).userGroups.list();
    expect(user_groups.find((g) => g.name === "Standup")!.members).toEqual([]);
    // This bot gets no realm_user events: its cache learns it from its next registration.
    await bot.restart();
    expect(await dm(BEN, "team standup")).toBe("standup: Cy");
    sandbox.control.setActive(ANN, true);
    expect(
      (await client(OWNER).userGroups.list()).user_groups.find((g) => g.name === "Standup")!.members,
    ).toEqual([idOf(ANN)]);
  });

  it('drops a deactivated member at once when the bot gets realm_user events (bot.track("users"))', async () => {
    await bot.restart({
      bot: defineBot({
        setup(b) {
          b.track("users");
          team.setup(b as never, undefined as never);
        },
      }),
    });
    expect(await dm(BEN, "team standup")).toBe("standup: Ann, Cy");
    sandbox.control.setActive(ANN, false);
    await expect.poll(() => dm(BEN, "team standup")).toBe("standup: Cy");
  });

  it("follows membership changes from user_group events", async () => {
    const owner = client(OWNER);
    const { user_groups } = await owner.userGroups.list();
    const standup = user_groups.find((g) => g.name === "Standup")!;
    await owner.userGroups.updateMembers(standup.id, { add: [idOf(BEN)], delete: [idOf(ANN)] });
    expect(await dm(BEN, "team standup")).toBe("standup: Ben, Cy");
    const oncall = user_groups.find((g) => g.name === "oncall")!;
    await owner.userGroups.updateMembers(standup.id, { delete_subgroups: [oncall.id] });
    expect(await dm(BEN, "team standup")).toBe("standup: Ben");
  });
});

describe("the client's user-group calls", () => {
  it("lists the groups typed, with members, subgroups and permission settings", async () => {
    const { user_groups } = await client(ANN).userGroups.list();
    const standup = user_groups.find((g) => g.name === "Standup")!;
    expect(standup).toMatchObject({ members: [idOf(ANN)], is_system_group: false });
    expect(standup.direct_subgroup_ids).toEqual([user_groups.find((g) => g.name === "oncall")!.id]);
    expect(user_groups.find((g) => g.name === "open")!.can_add_members_group).toEqual({
      direct_members: [idOf(BOT)],
      direct_subgroups: [],
    });
  });

  it("throws GroupPermissionError, an ApiError saying what an administrator can change, when refused", async () => {
    const reply = await dm(BEN, "join standup");
    expect(reply).toMatch(
      /^refused \(group \d+, BAD_REQUEST\): An administrator can allow it: in the group's settings/,
    );
    expect(reply).toContain('"Who can add members to this group" (can_add_members_group)');
    expect(reply).toContain('"Who can administer all user groups" (can_manage_all_groups)');
    const err = await client(BEN)
      .userGroups.updateMembers(1_000, { add: [idOf(BEN)] })
      .catch((e: unknown) => e);
    const { user_groups } = await client(OWNER).userGroups.list();
    const standup = user_groups.find((g) => g.name === "Standup")!.id;
    const removing = await client(BEN)
      .userGroups.updateMembers(standup, { delete: [idOf(ANN)] })
      .catch((e: unknown) => e);
    expect(removing).toBeInstanceOf(GroupPermissionError);
    expect((removing as GroupPermissionError).message).toMatch(
      /^POST \/user_groups\/\d+\/members: the account may not remove members from user group \d+ \(400 BAD_REQUEST: Insufficient permission\)\. .*\(can_remove_members_group\)/,
    );
    // Another refusal stays a plain ApiError.
    expect(err).toBeInstanceOf(ApiError);
    expect(err).not.toBeInstanceOf(GroupPermissionError);
    expect((err as ApiError).msg).toBe("Invalid user group");
  });

  it("adds when the group lets the bot", async () => {
    expect(await dm(BEN, "join open")).toBe("added");
    expect(await dm(BEN, "team open")).toBe("open: Ben");
  });
});
