import { describe, expect, it } from "vitest";
import { applyPersonUpdate } from "../../../src/effects/users/user-cache.ts";
import type { User } from "../../../src/wire/records.ts";

const user: User = {
  user_id: 8,
  email: "mel@example.org",
  delivery_email: "mel@example.org",
  full_name: "Mel",
  date_joined: "2024-01-01T00:00:00+00:00",
  is_active: true,
  is_owner: false,
  is_admin: false,
  is_guest: false,
  is_bot: false,
  role: 400,
  timezone: "Europe/Berlin",
  avatar_version: 1,
  profile_data: { "3": { value: "they/them" } },
};

describe("applyPersonUpdate (each form of realm_user update the server sends: one field group per event)", () => {
  it.each([
    ["full name", { full_name: "Mel M." }, { full_name: "Mel M." }],
    ["API email", { new_email: "user8@example.org" }, { email: "user8@example.org" }],
    ["delivery email hidden", { delivery_email: null }, { delivery_email: null }],
    ["role", { role: 100 }, { role: 100, is_owner: true, is_admin: true, is_guest: false }],
    ["guest role", { role: 600 }, { role: 600, is_owner: false, is_admin: false, is_guest: true }],
    [
      "time zone (with the deprecated email)",
      { timezone: "UTC", email: "mel@example.org" },
      { timezone: "UTC" },
    ],
    ["deactivation", { is_active: false }, { is_active: false }],
    ["imported stub logs in", { is_imported_stub: false }, { is_imported_stub: false }],
    [
      "date joined",
      { date_joined: "2025-02-02T00:00:00+00:00" },
      { date_joined: "2025-02-02T00:00:00+00:00" },
    ],
  ])("%s", (_name, change, expected) => {
    const next = applyPersonUpdate(user, { user_id: 8, ...change });
    expect(next).toEqual({ ...user, ...expected });
    expect(user.role).toBe(400); // the cached record is not modified
  });

  it("sets, replaces and clears a custom profile field", () => {
    const set = applyPersonUpdate(user, {
      user_id: 8,
      custom_profile_field: { id: 4, value: "https://mel.example", rendered_value: "<p>x</p>" },
    });
    expect(set.profile_data).toEqual({
      "3": { value: "they/them" },
      "4": { value: "https://mel.example", rendered_value: "<p>x</p>" },
    });
    const cleared = applyPersonUpdate(set, { user_id: 8, custom_profile_field: { id: 3, value: null } });
    expect(cleared.profile_data).toEqual({
      "4": { value: "https://mel.example", rendered_value: "<p>x</p>" },
    });
  });
});
