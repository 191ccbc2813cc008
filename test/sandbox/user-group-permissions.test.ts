/**
 * Who may change a user group's members, as the real server decides from feature level 305: the
 * organization's `can_manage_all_groups` (administrators by default), the group's
 * `can_manage_group`, `can_add_members_group` and `can_remove_members_group`; anyone may leave;
 * a guest adds nobody; a system group is nobody's to change. Refused: 400 "Insufficient permission".
 */
import type { OrgInput } from "../../src/testing.ts";
import { BOT, expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";
import { groupLookups } from "../support/sandbox/user-groups.ts";

const ADMIN = "admin@sandbox.example";
const MOD = "mod@sandbox.example";
const GUEST = "guest@sandbox.example";
const ADDER = "adder@sandbox.example";
const ORG: OrgInput = {
  realm: { moderation_request_channel: null },
  users: [
    { email: OWNER, full_name: "Olive Owner", role: "owner" },
    { email: ADMIN, full_name: "Ada Admin", role: "admin" },
    { email: MOD, full_name: "Moe Moderator", role: "moderator" },
    { email: MEMBER, full_name: "Mel Member" },
    { email: ADDER, full_name: "Ann Adder" },
    { email: GUEST, full_name: "Gus Guest", role: "guest" },
  ],
  bots: [{ email: BOT, full_name: "Sandbox Bot", owner: OWNER }],
  channels: [{ name: "general", subscribers: [OWNER, MEMBER, BOT] }],
  user_groups: [
    { name: "leads", members: [MOD] },
    { name: "backend", members: [MEMBER], can_add_members_group: [ADDER, "leads", GUEST] },
  ],
};
test.override({ sandboxOptions: { org: ORG } });

const REFUSED = { result: "error", msg: "Insufficient permission", code: "BAD_REQUEST" };

const setup = groupLookups;

test("a member named in no setting, and a bot, are refused; an administrator is not", async ({ sb }) => {
  const { id, user } = await setup(sb);
  const backend = `/user_groups/${id("backend")}/members`;
  expect((await sb.as(MEMBER).post(backend, { add: [user(OWNER)] })).body).toEqual(REFUSED);
  const bot = await sb.as(BOT).post(backend, { add: [user(OWNER)] });
  expect(bot.status).toBe(400);
  expect(bot.body).toEqual(REFUSED);
  expect((await sb.as(ADMIN).post(backend, { add: [user(OWNER)] })).status).toBe(200);
  expect((await sb.as(OWNER).post(backend, { delete: [user(OWNER)] })).status).toBe(200);
});

test("can_add_members_group admits its direct members and its subgroups' members, to add only", async ({
  sb,
}) => {
  const { id, user } = await setup(sb);
  const backend = `/user_groups/${id("backend")}/members`;
  expect((await sb.as(ADDER).post(backend, { add: [user(OWNER)] })).status).toBe(200);
  expect((await sb.as(MOD).post(backend, { add: [user(ADMIN)] })).status).toBe(200); // through "leads"
  expect((await sb.as(ADDER).post(backend, { delete: [user(OWNER)] })).body).toEqual(REFUSED);
  // A guest adds nobody, even when named.
  expect((await sb.as(GUEST).post(backend, { add: [user(BOT)] })).body).toEqual(REFUSED);
  // Anyone may leave.
  expect((await sb.as(MEMBER).post(backend, { delete: [user(MEMBER)] })).status).toBe(200);
  const members = (await sb.as(OWNER).get(`/user_groups/${id("backend")}/members`)).body.members;
  expect([...members].sort()).toEqual([user(OWNER), user(ADMIN)].sort());
});

test("a system group is nobody's to change, and GET /user_groups shows the settings", async ({ sb }) => {
  const { id, user, groups } = await setup(sb);
  expect(
    (await sb.as(OWNER).post(`/user_groups/${id("role:members")}/members`, { add: [user(GUEST)] })).body,
  ).toEqual(REFUSED);
  const backend = groups.find((g) => g.name === "backend") as Record<string, unknown>;
  expect(backend.can_add_members_group).toEqual({
    direct_members: [user(ADDER), user(GUEST)],
    direct_subgroups: [id("leads")],
  });
  expect(backend.can_manage_group).toEqual({ direct_members: [], direct_subgroups: [] });
});

test.describe("with can_manage_all_groups set to moderators", () => {
  test.override({
    sandboxOptions: { org: { ...ORG, realm: { ...ORG.realm, can_manage_all_groups: "role:moderators" } } },
  });
  test("a moderator changes any group; a member still may not", async ({ sb }) => {
    const { id, user } = await setup(sb);
    expect(
      (await sb.as(MOD).post(`/user_groups/${id("backend")}/members`, { delete: [user(MEMBER)] })).status,
    ).toBe(200);
    expect(
      (await sb.as(MEMBER).post(`/user_groups/${id("leads")}/members`, { add: [user(MEMBER)] })).body,
    ).toEqual(REFUSED);
  });
});

test.describe("before feature level 305", () => {
  test.override({ sandboxOptions: { org: { ...ORG, realm: { ...ORG.realm, feature_level: 300 } } } });
  test("a group's own members and moderators may change it", async ({ sb }) => {
    const { id, user } = await setup(sb);
    expect(
      (await sb.as(MEMBER).post(`/user_groups/${id("backend")}/members`, { add: [user(OWNER)] })).status,
    ).toBe(200);
    expect(
      (await sb.as(ADDER).post(`/user_groups/${id("backend")}/members`, { add: [user(ADMIN)] })).body,
    ).toEqual(REFUSED);
  });
});
