/**
 * The server's system bots, known by the ids a registration lists or, without the users list, by
 * their default addresses whatever their case.
 */
import { describe, expect, it } from "vitest";
import { SystemBots } from "../../../src/effects/users/system-bots.ts";

describe("SystemBots", () => {
  it("knows the default addresses in any case, and nobody else at zulip.com or elsewhere", () => {
    const bots = new SystemBots();
    expect(bots.has(1, "notification-bot@zulip.com")).toBe(true);
    expect(bots.has(1, "Notification-Bot@Zulip.COM")).toBe(true);
    expect(bots.has(1, "welcome-bot@zulip.com")).toBe(true);
    expect(bots.has(1, "someone@zulip.com")).toBe(false);
    expect(bots.has(1, "notification-bot@zulip.com.example")).toBe(false);
    expect(bots.has(1, "notification-bot@example.com")).toBe(false);
  });

  it("knows the ids of a registration's cross_realm_bots, whatever their address", () => {
    const bots = new SystemBots();
    bots.learn([{ user_id: 7, email: "notes@example.com" }, { email: "no-id@example.com" }, null]);
    expect(bots.has(7, "notes@example.com")).toBe(true);
    expect(bots.has(8, "no-id@example.com")).toBe(false);
  });
});
