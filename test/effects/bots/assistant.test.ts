/**
 * The assistant bot (bots/assistant.ts) against the sandbox over HTTP and an imitation of a
 * chat-completions endpoint on localhost: a streamed answer shown in one message, the topic's
 * recent messages sent as context, the endpoint's key sent and never shown, the hourly cap, and a
 * clear answer when the endpoint is down, refuses, never answers or stalls. It imports "bothost",
 * which resolves to dist/: run `npm run build` first (`npm test` does).
 */
import type { Sandbox } from "bothost/testing";
import { createBotTest, expect } from "bothost/testing/vitest";
import { afterEach, beforeEach } from "vitest";
import assistant from "../../../bots/assistant.ts";
import { type ChatEndpoint, startChatEndpoint } from "./chat-endpoint.ts";

const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";
const KEY = "sk-imitation-0123456789";
process.env.ASSISTANT_TEST_KEY = KEY;

const test = createBotTest({});
let endpoint: ChatEndpoint;
beforeEach(async () => {
  endpoint = await startChatEndpoint();
});
afterEach(() => endpoint.stop());

const settings = (more: Record<string, unknown> = {}) => ({
  base_url: endpoint.url,
  model: "imitation-1",
  api_key_env: "ASSISTANT_TEST_KEY",
  ...more,
});
const dm = (to: string, content: string) => ({ type: "direct" as const, to: [to], content });
const reactionsOn = (sandbox: Pick<Sandbox, "control">, id: number) =>
  sandbox.control.messageView(id)!.reactions.map((r) => r.emoji_name);

test("streams the answer into one message, with the topic's recent messages as context", async ({
  runBot,
  sandbox,
}) => {
  const bot = await runBot({
    bot: assistant,
    name: "assistant",
    settings: settings(),
    config: "handler_timeout: 1m",
  });
  const where = { type: "stream" as const, to: "general", topic: "deploys" };
  sandbox.control.sendAs(OWNER, { ...where, content: "The deploy of api 1.4 failed at 10:02." });
  sandbox.control.sendAs(MEMBER, { ...where, content: "Rolled back at 10:05." });
  sandbox.control.sendAs(MEMBER, { type: "stream", to: "general", topic: "other", content: "unrelated" });
  endpoint.queue({
    kind: "stream",
    chunks: ["It ", "failed ", "at **10:02**", " and was rolled back."],
    usage: 42,
  });
  const asked = bot.post(MEMBER, { ...where, content: "@**assistant** what happened?" });
  const view = await bot.progress(asked, { timeoutMs: 10_000 });
  expect(view.messages).toHaveLength(1);
  expect(view.text).toBe("It failed at **10:02** and was rolled back.");
  expect(reactionsOn(sandbox, asked)).toEqual(["check"]);
  const [request] = endpoint.requests;
  expect(request!.authorization).toBe(`Bearer ${KEY}`);
  expect(request!.body).toMatchObject({ model: "imitation-1", stream: true, max_tokens: 1024 });
  expect(request!.body.messages).toEqual([
    { role: "system", content: expect.stringContaining("helpful assistant") },
    { role: "user", content: "Olive Owner: The deploy of api 1.4 failed at 10:02." },
    { role: "user", content: "Mel Member: Rolled back at 10:05." },
    { role: "user", content: "Mel Member: what happened?" },
  ]);
});

test("answers direct messages; its own earlier answers are the assistant's turns", async ({ runBot }) => {
  const bot = await runBot({ bot: assistant, name: "assistant", settings: settings() });
  endpoint.queue({ kind: "stream", chunks: ["Four."] }, { kind: "stream", chunks: ["Five."] });
  const first = bot.post(MEMBER, dm(bot.email, "2+2?"));
  expect((await bot.progress(first, { timeoutMs: 10_000 })).text).toBe("Four.");
  const second = bot.post(MEMBER, dm(bot.email, "and +1?"));
  expect((await bot.progress(second, { timeoutMs: 10_000 })).text).toBe("Five.");
  expect(endpoint.requests[1]!.body.messages).toEqual([
    expect.objectContaining({ role: "system" }),
    { role: "user", content: "Mel Member: 2+2?" },
    { role: "assistant", content: "Four." },
    { role: "user", content: "Mel Member: and +1?" },
  ]);
});

test("a placeholder left, or the note where an answer was posted anew, is not sent as the assistant's turn", async ({
  runBot,
  sandbox,
}) => {
  const bot = await runBot({ bot: assistant, name: "assistant", settings: settings() });
  const where = { type: "stream" as const, to: "general", topic: "sums" };
  endpoint.queue({ kind: "stream", chunks: ["Five."] });
  sandbox.control.sendAs(MEMBER, { ...where, content: "2+2?" });
  sandbox.control.sendAs(bot.email, { ...where, content: "(finished: see below)" });
  sandbox.control.sendAs(bot.email, { ...where, content: "Four." });
  sandbox.control.sendAs(MEMBER, { ...where, content: "why?" });
  sandbox.control.sendAs(bot.email, { ...where, content: "Thinking…" });
  const asked = bot.post(MEMBER, { ...where, content: "@**assistant** and +1?" });
  expect((await bot.progress(asked, { timeoutMs: 10_000 })).text).toBe("Five.");
  expect(endpoint.requests[0]!.body.messages).toEqual([
    expect.objectContaining({ role: "system" }),
    { role: "user", content: "Mel Member: 2+2?" },
    { role: "assistant", content: "Four." },
    { role: "user", content: "Mel Member: why?" },
    { role: "user", content: "Mel Member: and +1?" },
  ]);
});

test("caps calls per person per hour, and says when to ask again", async ({ runBot, clock }) => {
  const bot = await runBot({
    bot: assistant,
    name: "assistant",
    settings: settings({ per_person_hour: { calls: 2, tokens: 100_000 } }),
  });
  for (const q of ["one", "two"]) {
    const asked = bot.post(MEMBER, dm(bot.email, q));
    expect((await bot.progress(asked, { timeoutMs: 10_000 })).text).toBe("ok");
  }
  const third = await bot.ask(MEMBER, dm(bot.email, "three"));
  expect(third.content).toMatch(/^You have reached your hourly limit with me; ask again in \d+ min\.$/);
  expect(endpoint.requests).toHaveLength(2);
  await clock.advance(61 * 60_000);
  const later = bot.post(MEMBER, dm(bot.email, "four"));
  expect((await bot.progress(later, { timeoutMs: 10_000 })).text).toBe("ok");
});

test("an endpoint that is down: the person is told, the asking message marked", async ({
  runBot,
  sandbox,
}) => {
  await endpoint.stop();
  const bot = await runBot({ bot: assistant, name: "assistant", settings: settings() });
  const asked = bot.post(MEMBER, dm(bot.email, "hello?"));
  const view = await bot.progress(asked, { timeoutMs: 10_000 });
  expect(view.text).toMatch(
    /^⚠ The language model is not reachable right now\. .*\(cannot connect \(ECONNREFUSED\)\)$/,
  );
  expect(reactionsOn(sandbox, asked)).toEqual(["warning"]);
});

test("an answer whose connection is cut midway: the person is told, below what came", async ({ runBot }) => {
  const bot = await runBot({ bot: assistant, name: "assistant", settings: settings() });
  endpoint.queue({ kind: "cut", chunks: ["The first half"] });
  const cut = bot.post(MEMBER, dm(bot.email, "tell me"));
  // Whether the first half is read before the cut is the network's race; the notice is not.
  expect((await bot.progress(cut, { timeoutMs: 10_000 })).text).toMatch(
    /^(The first half\n\n)?⚠ The language model is not reachable right now\. Please try again later\. \(the connection was cut\)$/,
  );
});

test("an error answer is shown without the key, even when the endpoint quotes it", async ({ runBot }) => {
  const bot = await runBot({ bot: assistant, name: "assistant", settings: settings() });
  endpoint.queue(
    { kind: "error", status: 500, body: { error: { message: "model imitation-1 is overloaded" } } },
    { kind: "error", status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}` } } },
  );
  const busy = bot.post(MEMBER, dm(bot.email, "hi"));
  expect((await bot.progress(busy, { timeoutMs: 10_000 })).text).toBe(
    "⚠ The language model could not answer this request. (answered 500: model imitation-1 is overloaded)",
  );
  const refused = bot.post(MEMBER, dm(bot.email, "hi again"));
  const text = (await bot.progress(refused, { timeoutMs: 10_000 })).text;
  expect(text).toContain("answered 401: the API key was refused");
  expect(text).not.toContain(KEY);
  expect(JSON.stringify(bot.logs())).not.toContain(KEY);
});

test("an endpoint too slow to answer, and one that stalls midway", async ({ runBot }) => {
  const bot = await runBot({
    bot: assistant,
    name: "assistant",
    settings: settings({ answer_timeout_seconds: 1, idle_timeout_seconds: 1 }),
  });
  endpoint.queue({ kind: "silent" }, { kind: "stall", chunks: ["The first half"] });
  const slow = bot.post(MEMBER, dm(bot.email, "hi"));
  expect((await bot.progress(slow, { timeoutMs: 10_000 })).text).toBe(
    "⚠ The language model did not start answering in time. Please try again in a while. (no answer within 1 s)",
  );
  const stalled = bot.post(MEMBER, dm(bot.email, "go on"));
  expect((await bot.progress(stalled, { timeoutMs: 10_000 })).text).toBe(
    "The first half\n\n⚠ The language model stopped answering midway; the answer above is incomplete. (the answer stopped for 1 s)",
  );
});

test("a dry run or a backtest never calls the endpoint: it says what it would ask", async ({
  runBot,
  sandbox,
}) => {
  const dry = { bot: assistant, name: "assistant", settings: settings(), config: "dry_run: true" };
  const bot = await runBot(dry);
  sandbox.control.sendAs(MEMBER, dm(bot.email, "earlier words"));
  const asked = bot.post(MEMBER, dm(bot.email, "what is up?"));
  await expect
    .poll(() => bot.logs().find((l) => l.messageId === asked && l.rule === "answer"), { timeout: 10_000 })
    .toMatchObject({ model: "imitation-1", context: 1 });
  const said = bot.logs().filter((l) => String(l.msg).startsWith("dry run: send"));
  expect(JSON.stringify(said)).toContain("imitation-1 would be asked, with 1 earlier messages as context");
  expect(endpoint.requests).toHaveLength(0);
  expect(bot.replies()).toHaveLength(0);
});
