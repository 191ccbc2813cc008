/**
 * `ctx.progress` when things go wrong, against the sandbox over HTTP on the test clock: the
 * progress message deleted by an administrator, and edits that fail.
 */
import { expect, it } from "vitest";
import { bot, clock, dm, feeds, nextRuns, results, sandbox, settle, start } from "./harness.ts";

const OWNER = "owner@sandbox.example";
const MEMBER = "member@sandbox.example";
const ACK = { working: "eyes", done: "check", failed: "warning" };

/** The answers to PATCH /messages/{id}, in order. */
const patches = (id: number) =>
  sandbox.control.requests.filter((r) => r.method === "PATCH" && r.path === `/messages/${id}`);
const reactions = (id: number) =>
  (sandbox.control.messageView(id)!.reactions as { emoji_name: string; user_id: number }[])
    .filter((r) => r.user_id === bot.userId)
    .map((r) => r.emoji_name);
const contentOf = (id: number) => sandbox.control.messages().find((m) => m.id === id)?.content;

/** Move the clock a second at a time until `until` holds (at most two minutes of it). */
async function runUntil<T>(until: () => T | undefined | false): Promise<T> {
  for (let i = 0; i < 120; i++) {
    const value = until();
    if (value) return value;
    await clock.advance(1_000);
    await settle();
  }
  throw new Error("runUntil: not reached within 120 s of the clock");
}

it("a deleted progress message is edited no more: the result is posted anew and done() resolves", async () => {
  await start();
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
  const auth = Buffer.from(`${OWNER}:${sandbox.control.apiKeyOf(OWNER)}`).toString("base64");
  const deleted = await fetch(`${sandbox.url}/api/v1/messages/${first.id}`, {
    method: "DELETE",
    headers: { authorization: `Basic ${auth}` },
  });
  expect(deleted.status).toBe(200);
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
  await start();
  nextRuns(1);
  const asked = bot.post(MEMBER, dm("go"));
  const first = await bot.nextReply({ after: asked });
  sandbox.control.failNext(3, { status: 500, paths: [/^\/messages\/\d+$/] });
  feeds[0]!.push("step 1");
  // (A failure injected before acting changes nothing that waitFor sees: looked for instead.)
  while (patches(first.id).length === 0) await settle();
  for (let i = 0; i < 5; i++) await settle();
  // The tries made by each second of the clock: one a second, however they fail.
  const counts = [patches(first.id).length];
  while (counts.at(-1)! < 4 && counts.length < 10) {
    await clock.advance(1_000);
    for (let i = 0; i < 3; i++) await settle();
    counts.push(patches(first.id).length);
  }
  expect(counts[0]).toBe(1);
  for (let i = 1; i < counts.length; i++) expect(counts[i]! - counts[i - 1]!).toBeLessThanOrEqual(1);
  expect(patches(first.id).map((r) => r.status)).toEqual([500, 500, 500, 200]);
  feeds[0]!.end();
  await runUntil(() => results.length > 0);
  expect(contentOf(first.id)).toBe("step 1");
});
