/**
 * `ctx.progress` against the sandbox over HTTP, on the test clock: edits coalesced to at most one
 * a second, rollover before the content limit, the final text posted anew after the threshold,
 * a new message instead of an edit past the organization's edit time limit, the ack reactions,
 * a crash in the middle (nothing posted twice, and a run again that streams its text from the
 * start, a piece at a time, shows nothing twice and never less), and fewer edits when the call
 * budget is low.
 */
import { expect, it } from "vitest";
import { Feed, lines } from "./feed.ts";
import {
  bot,
  clock,
  dm,
  feeds,
  nextRuns,
  results,
  runs,
  sandbox,
  settle,
  showWhole,
  start,
} from "./harness.ts";
import { versions } from "./versions.ts";

const MEMBER = "member@sandbox.example";

const record = (id: number) => sandbox.control.messages().find((m) => m.id === id)!;
/** The sandbox-clock seconds of a message's content edits, oldest first. */
const editTimes = (id: number) =>
  (record(id).edit_history as { prev_content?: string; timestamp: number }[])
    .filter((e) => e.prev_content !== undefined)
    .map((e) => e.timestamp)
    .reverse();
const editsOf = (id: number) => editTimes(id).length;

/** Move the clock a second at a time until the bot has handled `asked`; what the progress shows. */
async function finish(asked: number, movedNote?: string) {
  let settled = false;
  const view = bot.progress(asked, { timeoutMs: 20_000, ...(movedNote ? { movedNote } : {}) }).finally(() => {
    settled = true;
  });
  for (let i = 0; i < 120 && !settled; i++) {
    await clock.advance(1_000);
    await settle();
  }
  return view;
}

async function firstMessage(asked: number) {
  const first = await bot.nextReply({ after: asked });
  expect(first.content).toBe("Working…");
  return first;
}

it("coalesces a burst of chunks: at most one edit per second of the clock, the final text whole", async () => {
  await start();
  nextRuns(1);
  const asked = bot.post(MEMBER, dm("go"));
  const first = await firstMessage(asked);
  const text = lines(60, 19);
  let edits = 0;
  for (let second = 0; second < 6; second++) {
    // Ten chunks in one instant of the clock, then a second passes.
    feeds[0]!.push(...text.slice(second * 10, second * 10 + 10));
    await sandbox.control.waitFor(() => editsOf(first.id) > edits);
    edits = editsOf(first.id);
    await clock.advance(1_000);
  }
  feeds[0]!.end();
  const view = await finish(asked);
  expect(view.messages).toHaveLength(1);
  expect(view.text).toBe(text.join("").trimEnd());
  const times = editTimes(first.id);
  // Sixty chunks, at most one edit a second: never two edits within one second of the clock.
  expect(new Set(times).size).toBe(times.length);
  expect(times.length).toBeLessThanOrEqual(8);
  expect(results[0]).toMatchObject({ edits: times.length, posts: 1, messageIds: [first.id] });
});

it("rolls over into a new message before the 10,000-character limit", async () => {
  await start();
  nextRuns(1);
  const asked = bot.post(MEMBER, dm("go"));
  await firstMessage(asked);
  const text = lines(250);
  feeds[0]!.push(...text);
  feeds[0]!.end();
  const view = await finish(asked);
  expect(view.messages).toHaveLength(3);
  for (const m of view.messages) expect(m.content.length).toBeLessThanOrEqual(10_000);
  expect(view.text).toBe(text.join("").trimEnd());
  expect(results[0]!.posts).toBe(3);
});

it("posts the final text as a new message when the work took longer than finalAfterMs", async () => {
  await start();
  nextRuns(1, { finalAfterMs: 30_000 });
  const asked = bot.post(MEMBER, dm("go"));
  const first = await firstMessage(asked);
  const text = lines(5);
  feeds[0]!.push(...text);
  await sandbox.control.waitFor(() => editsOf(first.id) > 0);
  await clock.advance(31_000);
  feeds[0]!.end();
  const view = await finish(asked);
  expect(view.messages.map((m) => m.content)).toEqual(["(finished: see below)", text.join("").trimEnd()]);
  expect(view.text).toBe(text.join("").trimEnd());
  expect(results[0]!.messageIds).toEqual([view.messages[1]!.id]);
});

it("goes on where its messages were moved: the topic resolved meanwhile gets the rollover and the final text", async () => {
  await start();
  nextRuns(1, { finalAfterMs: 30_000 });
  const asked = bot.post(MEMBER, {
    type: "stream",
    to: "general",
    topic: "build",
    content: "@**streamer** go",
  });
  const first = await firstMessage(asked);
  feeds[0]!.push("step 1\n");
  await sandbox.control.waitFor(() => editsOf(first.id) > 0);
  // Someone resolves the topic while the work goes on: every message in it moves.
  const owner = "owner@sandbox.example";
  const auth = Buffer.from(`${owner}:${sandbox.control.apiKeyOf(owner)}`).toString("base64");
  const moved = await fetch(`${sandbox.url}/api/v1/messages/${asked}`, {
    method: "PATCH",
    headers: { authorization: `Basic ${auth}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ topic: "✔ build", propagate_mode: "change_all" }),
  });
  expect(moved.status).toBe(200);
  const text = lines(150);
  feeds[0]!.push(...text);
  await sandbox.control.waitFor(() => {
    void clock.advance(1_000);
    return bot.replies().length > 1;
  });
  await clock.advance(31_000);
  feeds[0]!.end();
  const view = await finish(asked);
  const mine = sandbox.control.messages().filter((m) => m.sender_id === bot.userId);
  expect(mine.length).toBeGreaterThanOrEqual(3);
  expect(mine.map((m) => m.topic)).toEqual(mine.map(() => "✔ build"));
  expect(view.text).toBe(`step 1\n${text.join("")}`.trimEnd());
});

it("posts anew instead of editing a message past the organization's edit time limit", async () => {
  await start({ message_content_edit_limit_seconds: 60 });
  nextRuns(1, { finalAfterMs: 3_600_000 });
  const asked = bot.post(MEMBER, dm("go"));
  const first = await firstMessage(asked);
  const text = lines(6);
  feeds[0]!.push(...text.slice(0, 3));
  await sandbox.control.waitFor(() => editsOf(first.id) > 0);
  // 55 s on: within the server's 60 s, but inside the 10 s margin kept before it.
  await clock.advance(55_000);
  feeds[0]!.push(...text.slice(3));
  feeds[0]!.end();
  const view = await finish(asked);
  expect(view.messages.map((m) => m.content)).toEqual([
    text.slice(0, 3).join("").trimEnd(),
    text.slice(3).join("").trimEnd(),
  ]);
  for (const at of editTimes(first.id)) expect(at - first.timestamp).toBeLessThanOrEqual(60);
});

it("posts anew when the server refuses an edit as past its time limit", async () => {
  await start();
  nextRuns(1);
  const asked = bot.post(MEMBER, dm("go"));
  const first = await firstMessage(asked);
  const text = lines(4);
  feeds[0]!.push(...text.slice(0, 2));
  await sandbox.control.waitFor(() => editsOf(first.id) > 0);
  // This client knows no limit; the server says the message is too old all the same.
  const tooLate = {
    result: "error",
    msg: "The time limit for editing this message has past",
    code: "BAD_REQUEST",
  };
  sandbox.control.failNext(1, { status: 400, body: tooLate, paths: [/^\/messages\/\d+$/] });
  feeds[0]!.push(...text.slice(2));
  feeds[0]!.end();
  const view = await finish(asked);
  expect(view.messages.map((m) => m.content)).toEqual([
    text.slice(0, 2).join("").trimEnd(),
    text.slice(2).join("").trimEnd(),
  ]);
});

it("marks the asker's message while working and when done", async () => {
  await start();
  nextRuns(1, { ack: { working: "eyes", done: "check" } });
  const asked = bot.post(MEMBER, dm("go"));
  await firstMessage(asked);
  const reactions = () =>
    (sandbox.control.messageView(asked)!.reactions as { emoji_name: string; user_id: number }[])
      .filter((r) => r.user_id === bot.userId)
      .map((r) => r.emoji_name);
  expect(reactions()).toEqual(["eyes"]);
  feeds[0]!.push("all done");
  feeds[0]!.end();
  const view = await finish(asked);
  expect(view.text).toBe("all done");
  expect(reactions()).toEqual(["check"]);
});

/**
 * Ask; the first run streams 150 of `text`'s lines until they rolled over into a second message
 * showing some of the rest; then the bot crashes and starts again. Returns the asking message.
 */
async function crashAfterRollover(text: string[]): Promise<number> {
  const asked = bot.post(MEMBER, dm("go"));
  await firstMessage(asked);
  feeds[0]!.push(...text.slice(0, 150));
  await sandbox.control.waitFor(() => {
    void clock.advance(1_000);
    const second = bot.replies()[1];
    return second !== undefined && second.content.length > 1_000;
  });
  await bot.restart({ crash: true });
  return asked;
}

it("goes on from the last step made after a crash: nothing is posted twice", async () => {
  await start();
  const text = lines(250);
  const again = new Feed();
  again.push(...text);
  again.end();
  nextRuns([new Feed(), again]);
  const asked = await crashAfterRollover(text);
  const view = await finish(asked);
  expect(runs).toBe(2);
  expect(view.messages).toHaveLength(3);
  expect(bot.replies()).toHaveLength(3);
  expect(view.text).toBe(text.join("").trimEnd());
});

it.each(["stream", "update"])(
  "goes on from the last step made after a crash while the run again shows its text in pieces (%s)",
  async (how) => {
    await start();
    const text = lines(250);
    // Long enough that the end edits the messages rather than posting the text anew.
    nextRuns(2, { finalAfterMs: 3_600_000 });
    if (how === "update") showWhole();
    const asked = await crashAfterRollover(text);
    // The run again streams the same text as a handler does, a piece at a time: at first it has
    // less than the messages already show.
    const shown = () => bot.replies().map((m) => m.content.length);
    const before = shown();
    for (let i = 0; i < text.length; i += 5) {
      await sandbox.control.waitFor(() => runs === 2);
      feeds[1]!.push(...text.slice(i, i + 5));
      await clock.advance(1_000);
      await settle();
    }
    feeds[1]!.end();
    const view = await finish(asked);
    // No message went back to show less than it did before the crash: every version of each, from
    // the first that showed as much on, shows at least that much.
    for (const [k, reply] of bot.replies().entries()) {
      const floor = before[k] ?? 0;
      const lengths = versions(sandbox, reply.id).map((v) => v.length);
      expect(lengths.slice(lengths.findIndex((n) => n >= floor)).filter((n) => n < floor)).toEqual([]);
    }
    expect(view.messages).toHaveLength(3);
    expect(bot.replies()).toHaveLength(3);
    expect(view.text).toBe(text.join("").trimEnd());
  },
);

/** Ten lines a second for 30 s of the clock; the edits made. */
async function steadyStream(): Promise<number> {
  nextRuns(1);
  const asked = bot.post(MEMBER, dm("go"));
  const first = await firstMessage(asked);
  for (let second = 0; second < 30; second++) {
    feeds[0]!.push(...lines(3, 30, second * 3));
    await clock.advance(1_000);
    await settle();
  }
  feeds[0]!.end();
  const view = await finish(asked);
  expect(view.text).toBe(lines(90, 30).join("").trimEnd());
  return editsOf(first.id);
}

it("edits less often when the bot's call budget runs low, and meets no 429", async () => {
  await start({}, "handler_timeout: 1h\nrate_limit: { per_minute: 20 }");
  sandbox.control.setUserRateLimit(bot.email, [
    [60, 20],
    [3600, 2000],
  ]);
  const low = await steadyStream();
  expect(sandbox.control.rateLimitCount(bot.email, "other").refused).toBe(0);
  await bot.stop();
  await sandbox.stop();
  await start();
  const full = await steadyStream();
  expect(full).toBeGreaterThanOrEqual(20);
  // 20 calls a minute, 2 of them kept in reserve, the post and the startup calls counted too.
  expect(low).toBeLessThanOrEqual(18);
  expect(low).toBeLessThan(full * 0.6);
}, 60_000);
