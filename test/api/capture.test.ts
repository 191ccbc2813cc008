/**
 * A capturing client against a recording server: reads and the bot's own queue reach the server;
 * every call that would change something is recorded, answered as the server would, and never sent.
 */
import { describe, expect } from "vitest";
import { type CapturedCall, describeCall } from "../../src/api/capture.ts";
import { test } from "../support/api/client-fixture.ts";
import * as rec from "../support/api/records.ts";
import { success } from "../support/api/test-server.ts";

describe("capture", () => {
  test("sends reads and queue calls, captures writes with plausible answers", async ({
    server,
    makeClient,
  }) => {
    const calls: CapturedCall[] = [];
    const client = makeClient({ capture: (call) => calls.push(call) });
    server.reply(
      success(rec.ownUser),
      success({
        messages: [rec.message],
        anchor: 1,
        found_anchor: true,
        found_oldest: true,
        found_newest: true,
      }),
      success(rec.registerResponse),
      success(),
    );

    await client.users.me();
    await client.messages.get({ anchor: "newest", num_before: 1, num_after: 0 });
    const sent = await client.messages.send({ type: "stream", to: "general", topic: "t", content: "hi" });
    const again = await client.messages.send({ type: "direct", to: [7], content: "psst" });
    await client.reactions.add(42, { emoji_name: "eyes" });
    await client.messages.report(42, { report_type: "spam" });
    const scheduled = await client.scheduledMessages.create({
      type: "stream",
      to: 3,
      topic: "t",
      content: "later",
      scheduled_delivery_timestamp: 2_000_000_000,
    });
    const snippet = await client.savedSnippets.create({ title: "T", content: "C" });
    await client.typing.set({ op: "start", type: "direct", to: [7] });
    // Answered with the fields the server always sends: the answer's schema holds.
    const joined = await client.channels.subscribe({ subscriptions: [{ name: "launches" }] });
    await client.request("POST", "/register", { event_types: ["message"] });
    await client.request("DELETE", "/events", { queue_id: "q" });

    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /api/v1/users/me",
      "GET /api/v1/messages",
      "POST /api/v1/register",
      "DELETE /api/v1/events",
    ]);
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      "POST /messages",
      "POST /messages",
      "POST /messages/42/reactions",
      "POST /messages/42/report",
      "POST /scheduled_messages",
      "POST /saved_snippets",
      "POST /typing",
      "POST /users/me/subscriptions",
    ]);
    expect(joined).toMatchObject({ subscribed: {}, already_subscribed: {} });
    expect(describeCall(calls[7]!)).toBe("subscribe to #launches");
    expect(calls[0]?.params).toMatchObject({ to: "general", topic: "t", content: "hi" });
    expect(sent.id).toBe(calls[0]?.createdId);
    expect(again.id).toBe(sent.id + 1);
    expect(scheduled.scheduled_message_id).toBe(calls[4]?.createdId);
    expect(snippet.saved_snippet_id).toBe(calls[5]?.createdId);
    expect(sent.id).toBeGreaterThan(1e12);
  });
});

describe("describeCall", () => {
  const line = (method: CapturedCall["method"], path: string, params: CapturedCall["params"] = {}) =>
    describeCall({ method, path, params });

  test("says in words what a snippet or scheduled-message call would have done, not its route", () => {
    expect(line("POST", "/saved_snippets", { title: "House rules", content: "Be nice." })).toBe(
      'save the snippet "House rules": "Be nice."',
    );
    expect(line("PATCH", "/saved_snippets/7", { content: "Be kind." })).toBe('edit snippet 7: "Be kind."');
    expect(line("PATCH", "/saved_snippets/7", { title: "Rules" })).toBe('rename snippet 7 to "Rules"');
    expect(line("DELETE", "/saved_snippets/7")).toBe("delete snippet 7");
    expect(line("PATCH", "/scheduled_messages/9", { scheduled_delivery_timestamp: 2_000_000_000 })).toBe(
      "reschedule scheduled message 9 for 2033-05-18T03:33:20.000Z",
    );
    expect(line("DELETE", "/scheduled_messages/9")).toBe("cancel scheduled message 9");
  });

  test("names the people a direct message goes to, however `to` was given", () => {
    const names = new Map<number | string, string>([
      [4, "Mallory Spammer"],
      ["bob@example.org", "Bob Builder"],
    ]);
    const name = (u: number | string) => names.get(u);
    const dm = (to: unknown, path = "/messages") =>
      describeCall(
        { method: "POST", path, params: { type: "direct", to, content: "Hi" } as never },
        undefined,
        name,
      );
    expect(dm([5, 4])).toBe('send a direct message to user 5, Mallory Spammer: "Hi"');
    expect(dm("[4, 5]")).toBe('send a direct message to Mallory Spammer, user 5: "Hi"');
    expect(dm("4,bob@example.org")).toBe('send a direct message to Mallory Spammer, Bob Builder: "Hi"');
    expect(dm(["carol@example.org"])).toBe('send a direct message to carol@example.org: "Hi"');
  });
});
