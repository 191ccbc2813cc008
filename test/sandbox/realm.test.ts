import type { OrgInput } from "../../src/testing.ts";
import { openQueue } from "../support/sandbox/events.ts";
import { BOT, expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";

const ADMIN = "admin@sandbox.example";
const ORG: OrgInput = {
  realm: { moderation_request_channel: null },
  users: [
    { email: OWNER, full_name: "Olive Owner", role: "owner" },
    { email: ADMIN, full_name: "Ada Admin", role: "admin" },
    { email: MEMBER, full_name: "Mel Member" },
  ],
  bots: [{ email: BOT, full_name: "Sandbox Bot", owner: OWNER }],
  channels: [{ name: "general", subscribers: [OWNER, MEMBER, BOT] }],
  user_groups: [
    { name: "devs", members: [MEMBER, BOT], can_manage_group: [MEMBER, BOT] },
    { name: "ops", members: [ADMIN] },
  ],
};
test.override({ sandboxOptions: { org: ORG } });

const groupId = async (
  sb: {
    as(e: string): { get(p: string): Promise<{ body: { user_groups: { id: number; name: string }[] } }> };
  },
  name: string,
) => (await sb.as(OWNER).get("/user_groups")).body.user_groups.find((g) => g.name === name)!.id;

test("GET /user_groups and the register state show a group alike", async ({ sb }) => {
  const listed = (await sb.as(OWNER).get("/user_groups")).body.user_groups.find(
    (g: { name: string }) => g.name === "devs",
  );
  const reg = await sb.as(OWNER).post("/register", { fetch_event_types: ["realm_user_groups"] });
  const registered = reg.body.realm_user_groups.find((g: { name: string }) => g.name === "devs");
  expect(listed).toEqual(registered);
  expect(listed).toMatchObject({ name: "devs", creator_id: null, date_created: expect.any(Number) });
});

test("user group members and subgroups, with events", async ({ sb }) => {
  const devs = await groupId(sb, "devs");
  const ops = await groupId(sb, "ops");
  const ownerId = sb.sandbox.control.users().find((u) => u.email === OWNER)!.user_id;
  const q = await openQueue(sb.as(OWNER), { event_types: ["user_group"] });
  const member = sb.as(MEMBER);
  expect((await member.post(`/user_groups/${devs}/members`, { add: [ownerId] })).status).toBe(200);
  expect((await member.post(`/user_groups/${devs}/members`, { add: [ownerId] })).body.msg).toBe(
    `User ${ownerId} is already a member of this group`,
  );
  expect((await member.post(`/user_groups/${devs}/members`, { add: [999] })).body.msg).toBe(
    "Invalid user ID: 999",
  );
  expect((await member.post(`/user_groups/${devs}/subgroups`, { add: [ops] })).status).toBe(200);
  expect((await sb.as(ADMIN).post(`/user_groups/${ops}/subgroups`, { add: [devs] })).body.msg).toBe(
    `User group ${ops} is already a subgroup of one of the passed subgroups.`,
  );
  expect(
    (await member.post(`/user_groups/${devs}/members`, { delete: [ownerId], delete_subgroups: [ops] }))
      .status,
  ).toBe(200);
  expect((await member.post("/user_groups/999/members", { add: [ownerId] })).body.msg).toBe(
    "Invalid user group",
  );
  expect((await q.peek()).map((e) => e.op)).toEqual([
    "add_members",
    "add_subgroups",
    "remove_members",
    "remove_subgroups",
  ]);
  const members = await sb.as(OWNER).get(`/user_groups/${devs}/members`);
  expect(members.body.members.length).toBe(2);
});

test("bots may update user groups from FL 496 only", async ({ sb }) => {
  const devs = await groupId(sb, "devs");
  const ownerId = sb.sandbox.control.users().find((u) => u.email === OWNER)!.user_id;
  expect((await sb.as(BOT).post(`/user_groups/${devs}/members`, { add: [ownerId] })).status).toBe(200);
});

test.describe("at feature level 495", () => {
  test.override({ sandboxOptions: { org: { ...ORG, realm: { ...ORG.realm, feature_level: 495 } } } });
  test("bots are rejected from user group updates", async ({ sb }) => {
    const devs = await groupId(sb, "devs");
    const reply = await sb.as(BOT).post(`/user_groups/${devs}/members`, { add: [] });
    expect(reply.body).toEqual({
      result: "error",
      msg: "This endpoint does not accept bot requests.",
      code: "BAD_REQUEST",
    });
  });
});

test("playgrounds: administrators only, url_template needs exactly {code}", async ({ sb }) => {
  const form = {
    name: "Python",
    pygments_language: "Python",
    url_template: "https://play.example/?c={code}",
  };
  const denied = await sb.as(MEMBER).post("/realm/playgrounds", form);
  expect(denied.body).toEqual({
    result: "error",
    msg: "Must be an organization administrator",
    code: "UNAUTHORIZED_PRINCIPAL",
  });
  const ok = await sb.as(ADMIN).post("/realm/playgrounds", form);
  expect(ok.body).toEqual({ result: "success", msg: "", id: 1 });
  const bad = await sb
    .as(ADMIN)
    .post("/realm/playgrounds", { ...form, url_template: "https://play.example/?c={x}" });
  expect(bad.body.msg).toBe('"code" should be the only variable present in the URL template');
});

test("realm domains: owners only (FL ≥ 143); response is [id, domain]", async ({ sb }) => {
  const denied = await sb
    .as(ADMIN)
    .post("/realm/domains", { domain: "example.org", allow_subdomains: false });
  expect(denied.body).toEqual({
    result: "error",
    msg: "Must be an organization owner",
    code: "UNAUTHORIZED_PRINCIPAL",
  });
  const ok = await sb.as(OWNER).post("/realm/domains", { domain: "Example.org", allow_subdomains: true });
  expect(ok.body).toEqual({ result: "success", msg: "", new_domain: [1, "example.org"] });
  const dup = await sb.as(OWNER).post("/realm/domains", { domain: "example.org", allow_subdomains: true });
  expect(dup.body.msg).toBe("The domain example.org is already a part of your organization.");
});

test.describe("before feature level 143", () => {
  test.override({ sandboxOptions: { org: { ...ORG, realm: { ...ORG.realm, feature_level: 142 } } } });
  test("administrators may add realm domains", async ({ sb }) => {
    const ok = await sb.as(ADMIN).post("/realm/domains", { domain: "example.org", allow_subdomains: false });
    expect(ok.body.new_domain).toEqual([1, "example.org"]);
  });
});

test("user settings defaults: administrators, validated values, events", async ({ sb }) => {
  const q = await openQueue(sb.as(MEMBER), { event_types: ["realm_user_settings_defaults"] });
  const denied = await sb.as(MEMBER).patch("/realm/user_settings_defaults", { enter_sends: true });
  expect(denied.body.code).toBe("UNAUTHORIZED_PRINCIPAL");
  const ok = await sb
    .as(ADMIN)
    .patch("/realm/user_settings_defaults", { enter_sends: true, color_scheme: 2, emojiset: "text" });
  expect(ok.body).toEqual({ result: "success", msg: "" });
  expect((await sb.as(ADMIN).patch("/realm/user_settings_defaults", { color_scheme: 9 })).body.msg).toBe(
    "Invalid color_scheme",
  );
  expect((await sb.as(ADMIN).patch("/realm/user_settings_defaults", { emojiset: "apple" })).body.msg).toBe(
    "Invalid emojiset",
  );
  expect((await sb.as(ADMIN).patch("/realm/user_settings_defaults", { enter_sends: "yes" })).body.msg).toBe(
    "enter_sends is not valid JSON",
  );
  expect((await q.peek()).map((e) => [e.property, e.value])).toEqual([
    ["enter_sends", true],
    ["color_scheme", 2],
    ["emojiset", "text"],
  ]);
  const later = sb.sandbox.control.createUser({ email: "late@sandbox.example", full_name: "Late" });
  const settings = (await sb.as(later.email).register({ fetch_event_types: ["user_settings"] }))
    .user_settings;
  expect(settings).toMatchObject({ enter_sends: true, color_scheme: 2 });
  const existing = (await sb.as(MEMBER).register({ fetch_event_types: ["user_settings"] })).user_settings;
  expect(existing.enter_sends).toBe(false);
});

test("channel folders: administrators, name rules, description required", async ({ sb }) => {
  const ok = await sb.as(ADMIN).post("/channel_folders/create", { name: "Projects", description: "" });
  expect(ok.body).toEqual({ result: "success", msg: "", channel_folder_id: 1 });
  expect(
    (await sb.as(MEMBER).post("/channel_folders/create", { name: "X", description: "" })).body.code,
  ).toBe("UNAUTHORIZED_PRINCIPAL");
  expect((await sb.as(ADMIN).post("/channel_folders/create", { name: "X" })).body).toEqual({
    result: "error",
    msg: "Missing 'description' argument",
    code: "REQUEST_VARIABLE_MISSING",
    var_name: "description",
  });
  expect((await sb.as(ADMIN).post("/channel_folders/create", { name: "  ", description: "" })).body.msg).toBe(
    "Channel folder name can't be empty.",
  );
  expect(
    (await sb.as(ADMIN).post("/channel_folders/create", { name: "n".repeat(61), description: "" })).body.msg,
  ).toBe("name is too long (limit: 60 characters)");
});

test("push token removal: empty, unknown, and a registered one", async ({ sb }) => {
  const member = sb.as(MEMBER);
  for (const path of ["/users/me/android_gcm_reg_id", "/users/me/apns_device_token"]) {
    expect((await member.delete(path, { token: "" })).body).toEqual({
      result: "error",
      msg: "Empty or invalid length token",
      code: "BAD_REQUEST",
    });
    expect((await member.delete(path, { token: "x".repeat(4097) })).body.msg).toBe(
      "Empty or invalid length token",
    );
    expect((await member.delete(path, { token: "abcdef" })).body).toEqual({
      result: "error",
      msg: "Token does not exist",
      code: "BAD_REQUEST",
    });
    expect((await member.post(path, { token: "abcdef", appid: "org.example" })).status).toBe(200);
    expect((await member.delete(path, { token: "abcdef" })).status).toBe(200);
  }
});

test("push token endpoints refuse a bot before reading its token, as the server's human_users_only", async ({
  sb,
}) => {
  const refused = {
    result: "error",
    msg: "This endpoint does not accept bot requests.",
    code: "BAD_REQUEST",
  };
  for (const path of ["/users/me/android_gcm_reg_id", "/users/me/apns_device_token"]) {
    for (const token of ["", "abcdef"]) {
      const removed = await sb.as(BOT).delete(path, { token });
      expect([removed.status, removed.body]).toEqual([400, refused]);
    }
    const added = await sb.as(BOT).post(path, { token: "abcdef", appid: "org.example" });
    expect([added.status, added.body]).toEqual([400, refused]);
  }
});

test("saved snippets: create, list, edit, nothing-to-edit, delete, 404", async ({ sb }) => {
  const q = await openQueue(sb.as(MEMBER), { event_types: ["saved_snippets"] });
  const member = sb.as(MEMBER);
  const created = await member.post("/saved_snippets", { title: " Greeting ", content: "Hello!" });
  expect(created.body).toEqual({ result: "success", msg: "", saved_snippet_id: 1 });
  const listed = await member.get("/saved_snippets", { unused: "1" });
  expect(listed.body.saved_snippets).toEqual([
    { id: 1, title: "Greeting", content: "Hello!", date_created: expect.any(Number) },
  ]);
  expect(listed.body.ignored_parameters_unsupported).toBeUndefined();
  expect((await member.patch("/saved_snippets/1", {})).body).toEqual({ result: "success", msg: "" });
  expect((await member.patch("/saved_snippets/1", { content: "Hi!" })).status).toBe(200);
  expect((await member.delete("/saved_snippets/1")).status).toBe(200);
  const missing = await member.delete("/saved_snippets/1");
  expect(missing.status).toBe(404);
  expect(missing.body).toEqual({
    result: "error",
    msg: "Saved snippet does not exist.",
    code: "BAD_REQUEST",
  });
  expect((await member.post("/saved_snippets", { title: "", content: "x" })).body.msg).toBe(
    "title cannot be blank",
  );
  expect((await member.post("/saved_snippets", { title: "t", content: " " })).body.msg).toBe(
    "content cannot be blank",
  );
  expect((await sb.as(OWNER).patch("/saved_snippets/99", { title: "x" })).status).toBe(404);
  expect((await q.peek()).map((e) => e.op)).toEqual(["add", "update", "remove"]);
});
