/**
 * The read-back of waiting channel questions at a new queue (moves made while no queue read):
 * against the sandbox over real HTTP, a moved question is followed, and thousands of them are read
 * a page at a time, not all pages at once on the one signal.
 */
import { afterEach, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { followMovedQuestions } from "../../src/events/moved-questions.ts";
import type { Move } from "../../src/pipeline/dialogs/dialog-moves.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { deleteMessageAs } from "../support/delete-message.ts";

const BOT = "moves-bot@sandbox.example";

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.stop();
  sandbox = undefined;
});

it("follows a question no longer where it waits; 11,000 are read in 11 pages, one at a time", async () => {
  const s = await startSandbox();
  sandbox = s;
  s.control.createUser({ email: BOT, full_name: "Moves", bot: "generic", owner: "owner@sandbox.example" });
  const question = s.control.sendAs(BOT, { type: "stream", to: "general", topic: "standup", content: "Q?" });
  const general = s.control.messages().find((m) => m.id === question.id)!.stream_id!;
  // Waiting in "old name" by the dialog's header: the topic was renamed since.
  const waiting = new Map<number, string>([[question.id, `channel:${general}:old name`]]);
  for (let id = 1; waiting.size < 11_000; id++)
    if (id !== question.id) waiting.set(1_000_000 + id, "channel:1:t");
  const pages: number[] = [];
  let inFlight = 0;
  let most = 0;
  const client = createClient({ url: s.url, email: BOT, apiKey: s.control.apiKeyOf(BOT), rateLimit: false });
  const byIds = client.messages.byIds.bind(client.messages);
  client.messages.byIds = async (ids, options) => {
    most = Math.max(most, ++inFlight);
    pages.push(ids.length);
    try {
      return await byIds(ids, options);
    } finally {
      inFlight--;
    }
  };
  const followed: Move[] = [];
  const moved = await followMovedQuestions({
    client,
    featureLevel: 400,
    signal: new AbortController().signal,
    waiting,
    read: new Map(),
    follow: async (move) => {
      followed.push(move);
    },
  });
  expect(moved).toBe(1);
  expect(followed).toEqual([
    {
      from: `channel:${general}:old name`,
      ids: [question.id],
      channelId: general,
      channel: "general",
      topic: "standup",
    },
  ]);
  expect(pages).toEqual(Array(11).fill(1_000));
  expect(most).toBe(1);
});

it("questions waiting in direct messages are read in the same pages; one absent is deleted, a channel one absent from public channels too (feature level 300 and later only)", async () => {
  const s = await startSandbox();
  sandbox = s;
  s.control.createUser({ email: BOT, full_name: "Moves", bot: "generic", owner: "owner@sandbox.example" });
  const dm = (content: string) =>
    s.control.sendAs(BOT, { type: "direct", to: ["member@sandbox.example"], content }).id;
  const [kept, deleted] = [dm("Q1?"), dm("Q2?")];
  const inChannel = s.control.sendAs(BOT, { type: "stream", to: "general", topic: "t", content: "Q?" }).id;
  const general = s.control.messages().find((m) => m.id === inChannel)!.stream_id!;
  const client = createClient({ url: s.url, email: BOT, apiKey: s.control.apiKeyOf(BOT), rateLimit: false });
  for (const id of [deleted, inChannel]) await deleteMessageAs(s, BOT, id);
  const pages: number[][] = [];
  const byIds = client.messages.byIds.bind(client.messages);
  client.messages.byIds = (ids, options) => {
    pages.push([...ids]);
    return byIds(ids, options);
  };
  const read = (featureLevel: number) => {
    const gone: number[] = [];
    const moved = followMovedQuestions({
      client,
      featureLevel,
      signal: new AbortController().signal,
      waiting: new Map([[inChannel, `channel:${general}:t`]]),
      read: new Map(),
      follow: async () => {},
      direct: [kept, deleted],
      channel: [inChannel],
      gone: async (ids) => {
        gone.push(...ids);
      },
    });
    return moved.then(() => gone);
  };
  const reads = () => s.control.requests.filter((r) => r.method === "GET" && r.path === "/messages").length;
  expect(await read(400)).toEqual([inChannel, deleted]);
  // The channel question, not held, is read once more among public channels' messages (the
  // second of two calls): absent there too, it was deleted (or moved out of the bot's reach,
  // which the server tells as a deletion).
  expect(pages).toEqual([[inChannel, kept, deleted]]);
  expect(reads()).toBe(2);
  // An older server is asked one question at a time: nothing is concluded.
  expect(await read(200)).toEqual([]);
});

it("questions moved together into a topic of another channel share one read of it, within the rate limits", async () => {
  const s = await startSandbox();
  sandbox = s;
  s.control.createUser({ email: BOT, full_name: "Moves", bot: "generic", owner: "owner@sandbox.example" });
  s.control.setRateLimit(true);
  const OWNER = "owner@sandbox.example";
  const MEMBER = "member@sandbox.example";
  const here = { type: "stream" as const, to: "general", topic: "standup" };
  const questions = Array.from(
    { length: 30 },
    (_, i) => s.control.sendAs(BOT, { ...here, content: `Q${i}?` }).id,
  );
  const answer = (content: string) => s.control.sendAs(MEMBER, { ...here, content }).id;
  const answers = [answer("a"), answer("b")];
  const general = s.control.messages().find((m) => m.id === questions[0])!.stream_id!;
  // While no queue read: the owner moves the whole topic to a channel the bot is not in.
  const owner = createClient({
    url: s.url,
    email: OWNER,
    apiKey: s.control.apiKeyOf(OWNER),
    rateLimit: false,
  });
  await owner.channels.subscribe({ subscriptions: [{ name: "kitchen" }] });
  const kitchen = (await owner.channels.id("kitchen")).stream_id;
  // No Notification Bot notice in the new topic: this test is about following the move.
  await owner.messages.update(questions[0]!, {
    stream_id: kitchen,
    propagate_mode: "change_all",
    send_notification_to_new_thread: false,
  });
  const client = createClient({ url: s.url, email: BOT, apiKey: s.control.apiKeyOf(BOT) });
  const before = s.control.requests.length;
  const accepted: number[] = [];
  const moved = await followMovedQuestions({
    client,
    featureLevel: 400,
    signal: new AbortController().signal,
    waiting: new Map(questions.map((id) => [id, `channel:${general}:standup`])),
    read: new Map(),
    follow: async () => {},
    accept: (m) => accepted.push(m.id),
  });
  expect(moved).toBe(30);
  // The questions' read by ids (the bot still holds what it sent), then the topic's.
  const calls = s.control.requests.slice(before).map((r) => `${r.method} ${r.path} ${r.status}`);
  expect(calls).toEqual(Array(2).fill("GET /messages 200"));
  expect(client.budget.other.calls).toBe(2);
  // Each answer once; the questions are the bot's own.
  expect(accepted).toEqual(answers);
});
