/**
 * `ctx.progress` when things go wrong, against the sandbox over HTTP on a held test clock (a time
 * limit, a retry's pause and an edit's turn come only where the test moves the clock): the
 * progress message deleted by an administrator, edits that fail (one that landed with its answer
 * lost, then a crash), and a handler that throws or runs past its time limit with its progress open.
 */
import { expect, it } from "vitest";
import type { ProgressHandle } from "../../../src/effects/progress/types.ts";
import { deleteMessageAs } from "../../support/delete-message.ts";
import { lines } from "./feed.ts";
import { bot, clock, dm, feeds, nextRuns, results, runs, sandbox, settle, startHeld } from "./harness.ts";
import { runUntil } from "./run-until.ts";
import { versions } from "./versions.ts";

const OWNER = "owner@sandbox.example";
const MEMBER = "member@sandbox.example";
const ACK = { working: "eyes", done: "check", failed: "warning" };
const FAILED_NOTE = "(failed: the work stopped before it finished)";

/** The answers to PATCH /messages/{id}, in order. */
const patches = (id: number) =>
  sandbox.control.requests.filter((r) => r.method === "PATCH" && r.path === `/messages/${id}`);
const reactions = (id: number) =>
  (sandbox.control.messageView(id)!.reactions as { emoji_name: string; user_id: number }[])
    .filter((r) => r.user_id === bot.userId)
    .map((r) => r.emoji_name);
const contentOf = (id: number) => sandbox.control.messages().find((m) => m.id === id)?.content;

it("a deleted progress message is edited no more: the result is posted anew and done() resolves", async () => {
  await startHeld();
  nextRuns(1, { ack: ACK });
  const asked = bot.post(MEMBER, {
    type: "stream",
    to: "general",
    topic: "build",
    content: "@**streamer** go",
  });
  const first = await bot.nextReply({ after: asked });
  feeds[0]!.push("step 1");
  await sandbox.control.waitFor(() => contentOf(first.id) === "step 1");
  // An administrator deletes it; the server then answers an edit with 400 "Invalid message(s)".
  await deleteMessageAs(sandbox, OWNER, first.id);
  for (let i = 2; i <= 10; i++) {
    feeds[0]!.push(`\nstep ${i}`);
    await clock.advance(1_000);
    await settle();
  }
  feeds[0]!.end();
  await runUntil(() => results.length > 0);
  // One edit refused, never tried again.
  expect(patches(first.id).map((r) => r.status)).toEqual([200, 400]);
  const view = await bot.progress(asked);
  const text = Array.from({ length: 10 }, (_, i) => `step ${i + 1}`).join("\n");
  expect(view.messages.map((m) => m.content)).toEqual([text]);
  expect(results[0]).toMatchObject({ messageIds: [view.messages[0]!.id], text });
  expect(reactions(asked)).toEqual(["check"]);
});

it("an edit that fails is tried again when the next edit is due, not at once", async () => {
  await startHeld();
  nextRuns(1);
  const asked = bot.post(MEMBER, dm("go"));
  const first = await bot.nextReply({ after: asked });
  sandbox.control.failNext(3, { status: 500, paths: [/^\/messages\/\d+$/] });
  // Between tries: the progress waits for its next edit's turn (a timer of a second at most is
  // pending; the clock stands still, so no try comes until the test moves it), or the edit is in.
  const waiting = () => clock.pendingDelays().some((ms) => ms > 0 && ms <= 1_000);
  const settled = (made: number) =>
    patches(first.id).length > made && (waiting() || patches(first.id).at(-1)?.status === 200);
  feeds[0]!.push("step 1");
  // (A failure injected before acting changes nothing that waitFor sees: polled instead.)
  await expect.poll(() => settled(0)).toBe(true);
  // The tries made by each second of the clock: one a second, however they fail.
  const counts = [patches(first.id).length];
  while (counts.at(-1)! < 4 && counts.length < 10) {
    await clock.advance(1_000);
    await expect.poll(() => settled(counts.at(-1)!)).toBe(true);
    counts.push(patches(first.id).length);
  }
  expect(counts[0]).toBe(1);
  for (let i = 1; i < counts.length; i++) expect(counts[i]! - counts[i - 1]!).toBeLessThanOrEqual(1);
  expect(patches(first.id).map((r) => r.status)).toEqual([500, 500, 500, 200]);
  feeds[0]!.end();
  await runUntil(() => results.length > 0);
  expect(contentOf(first.id)).toBe("step 1");
});

it("an edit that landed with its answer lost, then a crash: the run again never shows less than the message does", async () => {
  await startHeld();
  nextRuns(2, { finalAfterMs: 3_600_000 });
  const asked = bot.post(MEMBER, dm("go"));
  const first = await bot.nextReply({ after: asked });
  const text = lines(10);
  const whole = text.join("").trimEnd();
  // The edit is made, and its answer lost: its record stays begun.
  sandbox.control.failNext(1, { status: 502, after: true, paths: [/^\/messages\/\d+$/] });
  feeds[0]!.push(...text);
  await sandbox.control.waitFor(() => patches(first.id).some((r) => r.status === 502));
  expect(contentOf(first.id)).toBe(whole);
  await bot.restart({ crash: true });
  // The run again shows the same text a line at a time: the message keeps showing all of it.
  for (const line of text) {
    await sandbox.control.waitFor(() => runs === 2);
    feeds[1]!.push(line);
    await clock.advance(1_000);
    await settle();
  }
  feeds[1]!.end();
  await runUntil(() => results.length > 0);
  // Every version the message showed: from the whole text on, never less.
  const shown = versions(sandbox, first.id);
  const since = shown.slice(shown.indexOf(whole));
  expect(since).toEqual(since.map(() => whole));
  expect(contentOf(first.id)).toBe(whole);
  expect(bot.replies()).toHaveLength(1);
});

it("a rollover post answered with a server error after it was made is found, not posted again", async () => {
  await startHeld();
  nextRuns(1, { finalAfterMs: 3_600_000 });
  const asked = bot.post(MEMBER, dm("go"));
  await bot.nextReply({ after: asked });
  const text = lines(150);
  feeds[0]!.push(...text.slice(0, 90));
  await runUntil(() => bot.replies()[0]!.content.length > 8_000);
  // The post that carries the text over 10,000 characters on is made, its answer a 502.
  const posts = () => sandbox.control.requests.filter((r) => r.method === "POST" && r.path === "/messages");
  sandbox.control.failNext(1, { status: 502, after: true, paths: [/^\/messages$/] });
  feeds[0]!.push(...text.slice(90));
  await runUntil(() => posts().some((r) => r.status === 502));
  feeds[0]!.end();
  await runUntil(() => results.length > 0);
  expect(bot.replies()).toHaveLength(2);
  expect(
    bot
      .replies()
      .map((m) => m.content)
      .join("\n"),
  ).toBe(text.join("").trimEnd());
  expect(results[0]!.messageIds).toEqual(bot.replies().map((m) => m.id));
});

it("a handler that throws with its progress open ends it as failed once its retries are spent", async () => {
  await startHeld({}, "handler_timeout: 1h\nretries: { attempts: 2, backoff: 1s }");
  nextRuns(2, { ack: ACK }, async () => {
    throw new Error("the build server exploded");
  });
  const asked = bot.post(MEMBER, dm("go"));
  const first = await bot.nextReply({ after: asked });
  feeds[0]!.push("step 1");
  await runUntil(() => contentOf(first.id) === "step 1");
  feeds[0]!.end();
  // The retry streams the same text and throws as well.
  feeds[1]!.push("step 1");
  feeds[1]!.end();
  await runUntil(() => contentOf(first.id) !== "step 1");
  expect(runs).toBe(2);
  expect(contentOf(first.id)).toBe(`step 1\n\n${FAILED_NOTE}`);
  // The working reaction comes off before the final one goes on: wait for the final one.
  await runUntil(() => reactions(asked).includes("warning"));
  expect(reactions(asked)).toEqual(["warning"]);
  // The retry went on in the same message: nothing else was posted.
  expect(bot.replies().map((m) => m.id)).toEqual([first.id]);
  await expect(bot.handled(asked)).rejects.toThrow(/dead letter/);
});

it("a handler cut by handler_timeout with its progress open ends it as failed, at its text when cut", async () => {
  await startHeld({}, "handler_timeout: 5s\nretries: { attempts: 2, backoff: 1s }");
  // Work that ignores its signal: it ends after the handler's time is up.
  const late = async (progress: ProgressHandle, signal: AbortSignal) => {
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    await progress.done("Done, too late.");
  };
  nextRuns(2, { ack: ACK, failedNote: "Stopped: it took too long." }, late);
  for (const feed of feeds) {
    feed.push("step 1");
    feed.end();
  }
  const asked = bot.post(MEMBER, dm("go"));
  const first = await bot.nextReply({ after: asked });
  // The text as it was when the time was up: what the handler did after it is not shown.
  await runUntil(() => contentOf(first.id) === "step 1\n\nStopped: it took too long.");
  expect(runs).toBe(2);
  expect(results).toEqual([]);
  // The working reaction comes off before the final one goes on: wait for the final one.
  await runUntil(() => reactions(asked).includes("warning"));
  expect(reactions(asked)).toEqual(["warning"]);
  expect(bot.replies().map((m) => m.id)).toEqual([first.id]);
  await expect(bot.handled(asked)).rejects.toThrow(/dead letter/);
});
