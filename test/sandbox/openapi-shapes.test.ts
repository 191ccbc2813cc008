/**
 * A tour of every sandbox endpoint whose responses are checked against the server's API
 * description (../shared/zulip-api/openapi.yaml). Every other sandbox test file runs the same
 * check on its own responses when it finishes (see support/fixture.ts).
 */
import { describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { ResponseRecord } from "../../src/sandbox/types.ts";
import { openQueue } from "../support/sandbox/events.ts";
import { BOT, fixtureFor, MEMBER, OWNER, recorded, recordingSandbox } from "../support/sandbox/fixture.ts";
import { checkResponses, loadSpec, SPEC_PATH } from "../support/sandbox/openapi-shapes.ts";

const spec = loadSpec();
/** Without the API description (outside this repository) the tour is skipped, and says why. */
const absent = spec === null ? ` (skipped: the API description ${SPEC_PATH} is absent)` : "";

describe.skipIf(spec === null)(`sandbox responses match the API description${absent}`, () => {
  it("covers every endpoint the sandbox serves", async () => {
    const sandbox = await recordingSandbox({ heartbeatSeconds: 1 });
    const sb = fixtureFor(sandbox);
    try {
      const c = sandbox.control;
      const ids = Object.fromEntries(c.users().map((u) => [u.email, u.user_id]));
      const owner = sb.as(OWNER);
      const member = sb.as(MEMBER);
      await sb.anon.get("/server_settings");
      const q = await openQueue(member, {
        client_capabilities: {
          notification_settings_null: true,
          bulk_message_deletion: true,
          stream_typing_notifications: true,
        },
      });
      await owner.register();
      const { body: sent } = await owner.post("/messages", {
        type: "stream",
        to: "general",
        topic: "tour",
        content: "hi @**Mel Member**",
      });
      await owner.post("/messages", { type: "direct", to: [ids[MEMBER]], content: "dm" });
      await owner.post(`/messages/${sent.id}/reactions`, { emoji_name: "tada" });
      await owner.patch(`/messages/${sent.id}`, { content: "edited", topic: "tour2" });
      await owner.get(`/messages/${sent.id}/history`);
      await owner.get(`/messages/${sent.id}`);
      await owner.get("/messages", {
        anchor: "newest",
        num_before: 10,
        num_after: 0,
        narrow: [["channel", "general"]],
      });
      await owner.post("/typing", { op: "start", to: [ids[MEMBER]] });
      await owner.post("/typing", { op: "start", type: "channel", stream_id: 1, topic: "tour2" });
      const { body: sm } = await owner.post("/scheduled_messages", {
        type: "stream",
        to: 1,
        topic: "later",
        content: "x",
        scheduled_delivery_timestamp: Math.floor(c.now() / 1000) + 3600,
      });
      await owner.get("/scheduled_messages");
      await owner.patch(`/scheduled_messages/${sm.scheduled_message_id}`, { content: "y" });
      await owner.delete(`/scheduled_messages/${sm.scheduled_message_id}`);
      await owner.delete("/scheduled_messages/999");
      const { body: snippet } = await owner.post("/saved_snippets", { title: "t", content: "c" });
      await owner.get("/saved_snippets");
      await owner.patch(`/saved_snippets/${snippet.saved_snippet_id}`, { title: "t2" });
      await owner.delete(`/saved_snippets/${snippet.saved_snippet_id}`);
      await owner.delete("/saved_snippets/999");
      await member.post(`/messages/${sent.id}/report`, { report_type: "spam" });
      await owner.get("/users");
      await owner.get("/users/me");
      await owner.get(`/users/${ids[MEMBER]}`);
      await owner.get(`/users/${MEMBER}`);
      await member.patch("/users/me/profile_data", { data: [] });
      await owner.get("/streams", { include_all: true });
      await owner.get("/streams/1");
      await owner.get("/streams/1/members");
      await owner.get("/get_stream_id", { stream: "general" });
      await owner.get("/users/me/1/topics");
      await owner.get("/users/me/subscriptions", { include_subscribers: true });
      await owner.post("/users/me/subscriptions", { subscriptions: [{ name: "tour" }] });
      await owner.delete("/users/me/subscriptions", { subscriptions: ["tour"] });
      await owner.get("/user_groups");
      await owner.patch("/realm/user_settings_defaults", { enter_sends: true });
      await owner.post("/realm/playgrounds", {
        name: "Py",
        pygments_language: "Python",
        url_template: "https://p.example/{code}",
      });
      await owner.post("/realm/domains", { domain: "example.org", allow_subdomains: false });
      await owner.post("/channel_folders/create", { name: "F", description: "" });
      await owner.get("/channel_folders");
      await owner.post("/users/me/android_gcm_reg_id", { token: "abc" });
      await owner.delete("/users/me/android_gcm_reg_id", { token: "abc" });
      await owner.delete("/users/me/apns_device_token", { token: "abc" });
      await owner.delete(`/messages/${sent.id}/reactions`, { emoji_name: "tada" });
      await owner.delete(`/messages/${sent.id}`);
      await member.get("/events", { queue_id: q.id, last_event_id: -1, dont_block: true });
      await member.get("/events", { queue_id: q.id, last_event_id: 1000, dont_block: true });
      const heartbeat = await sb.as(BOT).register({ event_types: ["message"] });
      await sb.as(BOT).get("/events", { queue_id: heartbeat.queue_id, last_event_id: -1 });
      await sb.as(BOT).delete("/events", { queue_id: heartbeat.queue_id });
      await sb.as(BOT).get("/events", { queue_id: heartbeat.queue_id, last_event_id: -1, dont_block: true });
    } finally {
      await sandbox.stop();
    }
    const report = checkResponses(recorded)!;
    console.info(`openapi tour: ${report.checked} responses on ${report.endpoints.size} endpoints checked`);
    expect(report.failures).toEqual([]);
    expect(report.endpoints.size).toBeGreaterThan(40);
  });

  it("register's custom_profile_fields carry required and editable_by_user, as the server sends", async () => {
    const responses: ResponseRecord[] = [];
    const sandbox = await startSandbox({
      org: {
        realm: { name: "Fields", host: "fields.example" },
        users: [{ email: "boss@fields.example", full_name: "Boss", role: "owner" }],
        custom_profile_fields: [
          { name: "Pronouns", type: "pronouns" },
          { name: "Badge", type: "short_text", editable_by_user: false, required: true },
          { name: "Team", type: "choice", choices: ["A", "B"], display_in_profile_summary: true },
        ],
      },
      onResponse: (r) => responses.push(r),
    });
    try {
      const body = await fixtureFor(sandbox)
        .as("boss@fields.example")
        .register({
          fetch_event_types: ["custom_profile_fields"],
        });
      expect(body.custom_profile_fields).toEqual([
        {
          id: expect.any(Number),
          name: "Pronouns",
          hint: "",
          field_data: "",
          order: 1,
          type: 8,
          required: false,
          editable_by_user: true,
        },
        {
          id: expect.any(Number),
          name: "Badge",
          hint: "",
          field_data: "",
          order: 2,
          type: 1,
          required: true,
          editable_by_user: false,
        },
        {
          id: expect.any(Number),
          name: "Team",
          hint: "",
          field_data: expect.any(String),
          order: 3,
          type: 3,
          required: false,
          editable_by_user: true,
          display_in_profile_summary: true,
        },
      ]);
    } finally {
      await sandbox.stop();
    }
    const report = checkResponses(responses)!;
    expect(report.endpoints).toContain("POST /register");
    expect(report.failures).toEqual([]);
  });
});
