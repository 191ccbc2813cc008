import type { OrgInput } from "../../src/testing.ts";
import { openQueue } from "../support/sandbox/events.ts";
import { BOT, expect, MEMBER, OWNER, test } from "../support/sandbox/fixture.ts";

const ORG: OrgInput = {
  realm: { name: "Private Co", host: "private.example", email_address_visibility: "admins" },
  users: [
    { email: "boss@private.example", full_name: "Boss", role: "owner" },
    { email: "admin@private.example", full_name: "Ada Admin", role: "admin", timezone: "Europe/Paris" },
    {
      email: "worker@private.example",
      full_name: "Wes Worker",
      profile_data: { Pronouns: "they/them", Manager: ["boss@private.example"] },
    },
  ],
  bots: [{ email: "helper-bot@private.example", full_name: "Helper", owner: "boss@private.example" }],
  channels: [{ name: "general", subscribers: ["boss@private.example", "worker@private.example"] }],
  custom_profile_fields: [
    { name: "Pronouns", type: "pronouns" },
    { name: "Manager", type: "user" },
    { name: "Badge", type: "short_text", editable_by_user: false },
    { name: "Site", type: "link" },
  ],
};

test.describe("with restricted email visibility", () => {
  test.override({ sandboxOptions: { org: ORG } });

  test("members see placeholders and no delivery_email; admins see real emails; bots always real", async ({
    sb,
  }) => {
    const ids = Object.fromEntries(sb.sandbox.control.users().map((u) => [u.email, u.user_id]));
    const asWorker = await sb.as("worker@private.example").get("/users");
    const admin = asWorker.body.members.find(
      (u: { user_id: number }) => u.user_id === ids["admin@private.example"],
    );
    expect(admin).toMatchObject({
      email: `user${ids["admin@private.example"]}@private.example`,
      delivery_email: null,
    });
    const bot = asWorker.body.members.find((u: { is_bot: boolean }) => u.is_bot);
    expect(bot).toMatchObject({
      email: "helper-bot@private.example",
      delivery_email: "helper-bot@private.example",
      bot_type: 1,
    });
    const asAdmin = await sb.as("admin@private.example").get("/users");
    const worker = asAdmin.body.members.find(
      (u: { user_id: number }) => u.user_id === ids["worker@private.example"],
    );
    expect(worker).toMatchObject({
      email: `user${ids["worker@private.example"]}@private.example`,
      delivery_email: "worker@private.example",
    });
  });

  test("GET /users/{email}: real email only when visible, placeholder always", async ({ sb }) => {
    const adminId = sb.sandbox.control.users().find((u) => u.email === "admin@private.example")!.user_id;
    const hidden = await sb.as("worker@private.example").get("/users/admin@private.example");
    expect(hidden.body).toEqual({ result: "error", msg: "No such user", code: "BAD_REQUEST" });
    const placeholder = await sb.as("worker@private.example").get(`/users/user${adminId}@private.example`);
    expect(placeholder.body.user).toMatchObject({
      user_id: adminId,
      full_name: "Ada Admin",
      timezone: "Europe/Paris",
    });
    const visible = await sb.as("boss@private.example").get("/users/admin@private.example");
    expect(visible.body.user.user_id).toBe(adminId);
  });

  test("profile data: include_custom_profile_fields, updates, errors, realm_user events", async ({ sb }) => {
    const ids = Object.fromEntries(sb.sandbox.control.users().map((u) => [u.email, u.user_id]));
    const worker = sb.as("worker@private.example");
    const shown = await worker.get(`/users/${ids["worker@private.example"]}`, {
      include_custom_profile_fields: true,
    });
    expect(shown.body.user.profile_data).toEqual({
      "1": { value: "they/them" },
      "2": { value: `[${ids["boss@private.example"]}]` },
    });
    const q = await openQueue(sb.as("boss@private.example"), { event_types: ["realm_user"] });
    const ok = await worker.patch("/users/me/profile_data", {
      data: [
        { id: 4, value: "https://wes.example" },
        { id: 1, value: null },
      ],
    });
    expect(ok.body).toEqual({ result: "success", msg: "" });
    expect((await q.peek()).map((e) => e.person)).toEqual([
      {
        user_id: ids["worker@private.example"],
        custom_profile_field: { id: 4, value: "https://wes.example" },
      },
      { user_id: ids["worker@private.example"], custom_profile_field: { id: 1, value: null } },
    ]);
    const me = await worker.get("/users/me");
    expect(me.body.profile_data).toEqual({
      "2": { value: `[${ids["boss@private.example"]}]` },
      "4": { value: "https://wes.example" },
    });
    expect((await worker.patch("/users/me/profile_data", { data: [{ id: 9, value: "x" }] })).body.msg).toBe(
      "Field id 9 not found.",
    );
    expect((await worker.patch("/users/me/profile_data", { data: [{ id: 3, value: "x" }] })).body.msg).toBe(
      "You are not allowed to change this field. Contact an administrator to update it.",
    );
    expect(
      (await worker.patch("/users/me/profile_data", { data: [{ id: 4, value: "not a url" }] })).body.msg,
    ).toBe("Site is not a URL");
    expect((await worker.patch("/users/me/profile_data", { data: [{ value: "x" }] })).body.msg).toBe(
      'data[0]["id"] field is missing: Field required',
    );
  });
});

test("GET /users/me returns the own user at the top level", async ({ sb }) => {
  const reply = await sb.as(MEMBER).get("/users/me");
  expect(reply.body).toMatchObject({
    result: "success",
    email: MEMBER,
    delivery_email: MEMBER,
    full_name: "Mel Member",
    role: 400,
    is_admin: false,
    is_owner: false,
    is_guest: false,
    is_bot: false,
    is_active: true,
    max_message_id: -1,
    profile_data: {},
  });
  expect(typeof reply.body.avatar_url).toBe("string");
  const bot = await sb.as(BOT).get("/users/me");
  expect(bot.body.profile_data).toBeUndefined();
});

test("GET /users/{id}: unknown id is No such user; client_gravatar controls avatar_url", async ({ sb }) => {
  const ownerId = sb.sandbox.control.users().find((u) => u.email === OWNER)!.user_id;
  expect((await sb.as(MEMBER).get("/users/999")).body).toEqual({
    result: "error",
    msg: "No such user",
    code: "BAD_REQUEST",
  });
  expect((await sb.as(MEMBER).get(`/users/${ownerId}`)).body.user.avatar_url).toBeNull();
  expect(
    typeof (await sb.as(MEMBER).get(`/users/${ownerId}`, { client_gravatar: false })).body.user.avatar_url,
  ).toBe("string");
});

test("new and deactivated users produce realm_user events", async ({ sb }) => {
  const q = await openQueue(sb.as(OWNER), { event_types: ["realm_user"] });
  const user = sb.sandbox.control.createUser({ email: "fresh@sandbox.example", full_name: "Fresh" });
  sb.sandbox.control.setActive(user.email, false);
  const events = await q.peek();
  expect(events[0]).toMatchObject({
    op: "add",
    person: { user_id: user.user_id, full_name: "Fresh", is_active: true },
  });
  expect(events[1]).toEqual({
    type: "realm_user",
    op: "update",
    person: { user_id: user.user_id, is_active: false },
    id: 1,
  });
});

test("control.createUser takes a past date_joined, shown by GET /users; a future or bad one is refused", async ({
  sb,
}) => {
  const control = sb.sandbox.control;
  const old = control.createUser({
    email: "veteran@sandbox.example",
    full_name: "Vera Veteran",
    date_joined: "2019-05-01T12:00:00Z",
  });
  const before = control.now();
  const fresh = control.createUser({ email: "newbie@sandbox.example", full_name: "Ned Newbie" });
  const after = control.now();
  const joined = async (id: number) => (await sb.as(MEMBER).get(`/users/${id}`)).body.user.date_joined;
  expect(await joined(old.user_id)).toBe("2019-05-01T12:00:00.000Z");
  const freshJoined = Date.parse(await joined(fresh.user_id));
  expect([freshJoined >= before, freshJoined <= after]).toEqual([true, true]);
  const future = new Date(control.now() + 60_000).toISOString();
  expect(() =>
    control.createUser({ email: "later@sandbox.example", full_name: "L", date_joined: future }),
  ).toThrow(`date_joined must be an ISO 8601 date no later than the sandbox clock, not "${future}".`);
  expect(() =>
    control.createUser({ email: "later@sandbox.example", full_name: "L", date_joined: "last year" }),
  ).toThrow('not "last year"');
});
