/**
 * The read-back of a send whose answer was lost (verify-send.ts), against the sandbox over HTTP:
 * the send is looked for where it must be, from the message it came after forward (or, with no
 * such id, back from the newest to the time it came after), however many of the bot's messages
 * came there since; in one GET /messages, a second when the first page is full, never more.
 */
import { afterEach, expect, it } from "vitest";
import { type Client, createClient } from "../../src/api/create-client.ts";
import { ApiError } from "../../src/api/errors.ts";
import type { SendMessageParams } from "../../src/api/resources/messages.ts";
import { findSent } from "../../src/effects/verify-send.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { TestClock } from "../../src/testing/test-clock.ts";

const BOT = "echo-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const SEND: SendMessageParams = { type: "stream", to: "general", topic: "t", content: "Build 42 passed." };

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.stop());

async function start() {
  const clock = new TestClock({ held: true });
  sandbox = await startSandbox({ clock });
  const { control } = sandbox;
  const self = control.createUser({
    email: BOT,
    full_name: "Echo",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: ["general"],
  }).user_id;
  const api = createClient({ url: sandbox.url, email: BOT, apiKey: control.apiKeyOf(BOT) });
  const by = (email: string, content: string, topic = "t") =>
    control.sendAs(email, { type: "stream", to: "general", topic, content }).id;
  /** `count` of the bot's messages in the topic, none of them the send. */
  const chatter = (count: number) => {
    for (let i = 0; i < count; i++) by(BOT, `Build ${i} queued.`);
  };
  const reads = () =>
    control.requests.filter((r) => r.method === "GET" && r.path === "/messages" && r.email === BOT).length;
  return { clock, api, self, by, chatter, reads };
}

it("a send 150 of the bot's messages past the message it came after is found, in two calls; an earlier same text is not it", async () => {
  const { api, self, by, chatter, reads } = await start();
  by(BOT, SEND.content);
  const bound = by(MEMBER, "@**Echo** build 42");
  // The same words elsewhere are not the send either.
  by(BOT, SEND.content, "other");
  chatter(150);
  const sent = by(BOT, SEND.content);
  chatter(30);
  expect(await findSent(api, self, SEND, { after: bound })).toEqual({ id: sent, content: SEND.content });
  expect(reads()).toBe(2);
});

it("with 1,200 of the bot's messages after the one it came after: a send just after it is found in one call; one not among the first 1,100 is absent after two", async () => {
  const { api, self, by, chatter, reads } = await start();
  const bound = by(MEMBER, "@**Echo** build 42");
  const sent = by(BOT, SEND.content);
  chatter(1200);
  expect(await findSent(api, self, SEND, { after: bound })).toEqual({ id: sent, content: SEND.content });
  expect(reads()).toBe(1);
  expect(
    await findSent(api, self, { ...SEND, content: "Build 43 passed." }, { after: bound }),
  ).toBeUndefined();
  expect(reads()).toBe(3);
});

it("with no message id to come after, the send is looked for back from the newest to the time it came after", async () => {
  const { clock, api, self, by, chatter, reads } = await start();
  by(BOT, SEND.content);
  await clock.advance(60_000);
  const since = Math.floor(clock.now() / 1000);
  const sent = by(BOT, SEND.content);
  chatter(150);
  expect(await findSent(api, self, SEND, { after: undefined, since })).toEqual({
    id: sent,
    content: SEND.content,
  });
  expect(reads()).toBe(2);
  // Older than the time it came after: the earlier same text is not the send.
  await clock.advance(60_000);
  const later = Math.floor(clock.now() / 1000);
  expect(await findSent(api, self, SEND, { after: undefined, since: later })).toBeUndefined();
  expect(reads()).toBe(3);
});

it("a channel that does not exist holds no send: absent, its narrow's refusal no failure; an operator the server does not know still fails", async () => {
  const { api, self, reads } = await start();
  const nowhere: SendMessageParams = { ...SEND, to: "nowhere" };
  expect(await findSent(api, self, nowhere, { after: 1 })).toBeUndefined();
  expect(await findSent(api, self, nowhere, { after: undefined, since: 0 })).toBeUndefined();
  expect(reads()).toBe(2);
  // A server older than the `channel` operator refuses it with the same code: not "nothing there".
  const desc = "unknown operator channel";
  const refused = new ApiError({
    status: 400,
    code: "BAD_NARROW",
    msg: `Invalid narrow operator: ${desc}`,
    endpoint: "GET /messages",
    data: { desc },
  });
  const old = { messages: { get: () => Promise.reject(refused) } } as unknown as Client;
  await expect(findSent(old, self, SEND, { after: 1 })).rejects.toBe(refused);
});
