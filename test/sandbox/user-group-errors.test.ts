/**
 * POST /user_groups/{id}/members and /subgroups answer as the server's views do: parameters read in
 * their declared order, an empty request refused before the group is looked up, each change (add,
 * delete, add_subgroups, delete_subgroups) checked in turn with its own permission and its own
 * order of checks, and nothing applied when any is refused.
 */
import type { OrgInput } from "../../src/testing.ts";
import { expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";
import { groupLookups } from "../support/sandbox/user-groups.ts";

const ADDER = "adder@sandbox.example";
const ORG: OrgInput = {
  realm: { moderation_request_channel: null },
  users: [
    { email: OWNER, full_name: "Olive Owner", role: "owner" },
    { email: MEMBER, full_name: "Mel Member" },
    { email: ADDER, full_name: "Ann Adder" },
  ],
  channels: [{ name: "general", subscribers: [OWNER, MEMBER] }],
  user_groups: [
    { name: "leads", members: [OWNER] },
    { name: "core", members: [OWNER] },
    { name: "backend", members: [MEMBER], can_add_members_group: [ADDER] },
  ],
};
test.override({ sandboxOptions: { org: ORG } });

const setup = groupLookups;
const error = (msg: string) => ({ result: "error", code: "BAD_REQUEST", msg });

test("an empty request is refused before its group is looked up", async ({ sb }) => {
  const { id } = await setup(sb);
  expect((await sb.as(OWNER).post("/user_groups/999/members", {})).body).toEqual(
    error('Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".'),
  );
  expect((await sb.as(OWNER).post(`/user_groups/${id("backend")}/members`, { add: [] })).status).toBe(400);
  expect((await sb.as(OWNER).post("/user_groups/999/subgroups", { delete: [] })).body).toEqual(
    error('Nothing to do. Specify at least one of "add" or "delete".'),
  );
});

test("parameters are read in the view's order: add_subgroups before delete", async ({ sb }) => {
  const { id } = await setup(sb);
  const res = await sb.as(OWNER).post(`/user_groups/${id("backend")}/members`, {
    delete: "x",
    add_subgroups: "y",
  });
  expect(res.status).toBe(400);
  expect(res.body.msg).toMatch(/^add_subgroups /);
});

test("each change is checked whole before the next: a bad id to add is named before a refused delete", async ({
  sb,
}) => {
  const { id, user } = await setup(sb);
  const backend = `/user_groups/${id("backend")}/members`;
  expect((await sb.as(ADDER).post(backend, { add: [999], delete: [user(MEMBER)] })).body).toEqual(
    error("Invalid user ID: 999"),
  );
  // Removing reads the users before the group and its permission.
  expect((await sb.as(MEMBER).post(backend, { delete: [999] })).body).toEqual(error("Invalid user ID: 999"));
  expect((await sb.as(MEMBER).post("/user_groups/999/members", { delete: [999] })).body).toEqual(
    error("Invalid user ID: 999"),
  );
});

test("adding subgroups takes can_add_members_group; removing them takes can_manage_group", async ({ sb }) => {
  const { id } = await setup(sb);
  const backend = `/user_groups/${id("backend")}`;
  expect((await sb.as(ADDER).post(`${backend}/members`, { add_subgroups: [id("leads")] })).status).toBe(200);
  expect((await sb.as(ADDER).post(`${backend}/subgroups`, { add: [id("core")] })).status).toBe(200);
  expect((await sb.as(ADDER).post(`${backend}/subgroups`, { delete: [id("core")] })).body).toEqual(
    error("Insufficient permission"),
  );
});

test("a group added to itself, or to a group within it, is refused in the server's words", async ({ sb }) => {
  const { id } = await setup(sb);
  const leads = id("leads");
  const core = id("core");
  expect((await sb.as(OWNER).post(`/user_groups/${leads}/subgroups`, { add: [leads] })).body).toEqual(
    error(`User group ${leads} is already a subgroup of one of the passed subgroups.`),
  );
  expect((await sb.as(OWNER).post(`/user_groups/${core}/subgroups`, { add: [leads] })).status).toBe(200);
  expect((await sb.as(OWNER).post(`/user_groups/${leads}/members`, { add_subgroups: [core] })).body).toEqual(
    error(`User group ${leads} is already a subgroup of one of the passed subgroups.`),
  );
});

test("a refused part leaves the earlier parts unapplied", async ({ sb }) => {
  const { id, user } = await setup(sb);
  const backend = `/user_groups/${id("backend")}/members`;
  const res = await sb.as(OWNER).post(backend, { add: [user(OWNER)], delete_subgroups: [id("leads")] });
  expect(res.body).toEqual(error(`User group ${id("leads")} is not a subgroup of this group.`));
  expect((await sb.as(OWNER).get(backend, { direct_member_only: true })).body.members).toEqual([
    user(MEMBER),
  ]);
});

test("GET subgroups lists subgroups at every depth unless direct_subgroup_only", async ({ sb }) => {
  const { id } = await setup(sb);
  const [leads, core, backend] = [id("leads"), id("core"), id("backend")];
  await sb.as(OWNER).post(`/user_groups/${core}/subgroups`, { add: [leads] });
  await sb.as(OWNER).post(`/user_groups/${backend}/subgroups`, { add: [core] });
  const all = (await sb.as(OWNER).get(`/user_groups/${backend}/subgroups`)).body.subgroups;
  expect([...all].sort()).toEqual([leads, core].sort());
  const direct = await sb.as(OWNER).get(`/user_groups/${backend}/subgroups`, { direct_subgroup_only: true });
  expect(direct.body.subgroups).toEqual([core]);
});
