/**
 * The message of a Slack-format delivery looked up through the API: against the sandbox over real
 * HTTP with its rate limits on, one its sender posted hundreds of messages after costs two calls.
 */
import { afterEach, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { findSlackMessage } from "../../src/webhook/slack-lookup.ts";
import { ManualClock } from "../support/manual-clock.ts";

const BOT = "slack-lookup-bot@sandbox.example";
const MEMBER = "member@sandbox.example";

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.stop();
  sandbox = undefined;
});

it("finds a message its sender posted 600 more after in two calls, within the rate limits", async () => {
  const clock = new ManualClock(Date.now() - 60_000);
  const s = await startSandbox({ clock });
  sandbox = s;
  s.control.createUser({ email: BOT, full_name: "Lookup", bot: "generic", owner: "owner@sandbox.example" });
  s.control.setRateLimit(true);
  const here = { type: "stream" as const, to: "general", topic: "flood" };
  s.control.sendAs(MEMBER, { ...here, content: "before" });
  await clock.advance(1000);
  const id = s.control.sendAs(MEMBER, { ...here, content: "@**Lookup** hi" }).id;
  const sent = s.control.messages().find((m) => m.id === id)!;
  await clock.advance(1000);
  for (let i = 0; i < 600; i++) s.control.sendAs(MEMBER, { ...here, content: `flood ${i}` });
  const client = createClient({ url: s.url, email: BOT, apiKey: s.control.apiKeyOf(BOT), clock });
  const before = s.control.requests.length;
  const event = await findSlackMessage(
    client,
    {
      channelId: sent.stream_id as number,
      senderId: sent.sender_id as number,
      timestamp: sent.timestamp as number,
      text: "@**Lookup** hi",
    },
    new AbortController().signal,
  );
  expect(event?.message.id).toBe(id);
  const calls = s.control.requests.slice(before).map((r) => `${r.method} ${r.path} ${r.status}`);
  expect(calls).toEqual(["GET /messages 200", "GET /messages 200"]);
  expect(client.budget.other.calls).toBe(2);
});
