/**
 * A progress whose text is longer than one message, against the sandbox over HTTP on a held test
 * clock: a long final text posted anew whose posting is cut partway (an answer lost, then a
 * crash), and a rollover cut at spaces whose edit's answer was lost before a crash.
 */
import { expect, it } from "vitest";
import { lines } from "./feed.ts";
import * as h from "./harness.ts";
import { runUntil } from "./run-until.ts";
import { versions } from "./versions.ts";

// `bot` and `sandbox` are the harness's live bindings (set by each start): read through `h`.
const { dm, feeds, nextRuns, results, startHeld } = h;

const MEMBER = "member@sandbox.example";

const contentOf = (id: number) => String(h.sandbox.control.messages().find((m) => m.id === id)?.content);

it("a long final text whose second part was posted with its answer lost, then a crash: the run again posts the rest, nothing twice", async () => {
  await startHeld();
  nextRuns(2, { finalAfterMs: 0 });
  const text = lines(250);
  const whole = text.join("").trimEnd();
  // Once the final text's first part is posted, the next post lands with its answer lost.
  let armed = false;
  h.watchResponses((r) => {
    if (armed || r.method !== "POST" || r.route !== "/messages" || r.status !== 200) return;
    const posted = contentOf((r.body as { id: number }).id);
    if (
      !posted.startsWith("line 0 ") ||
      h.bot.replies().filter((m) => m.content.startsWith("line 0 ")).length < 2
    )
      return;
    armed = true;
    h.sandbox.control.failNext(1, { status: 502, after: true, methods: ["POST"], paths: [/^\/messages$/] });
  });
  const asked = h.bot.post(MEMBER, dm("go"));
  await h.bot.nextReply({ after: asked });
  feeds[0]!.push(...text);
  // The work takes longer than finalAfterMs: its text is shown in two messages, then posted anew.
  await runUntil(
    () => h.bot.replies().length === 3 && h.bot.replies()[2]!.content.endsWith(text.at(-1)!.trimEnd()),
  );
  feeds[0]!.end();
  const lost = () =>
    h.sandbox.control.requests.some((r) => r.method === "POST" && r.path === "/messages" && r.status === 502);
  await runUntil(lost);
  await h.bot.restart({ crash: true });
  feeds[1]!.push(...text);
  feeds[1]!.end();
  await runUntil(() => results.length > 0);
  const said = h.bot.replies().map((m) => m.content);
  const moved = "(finished: see below)";
  expect(said.slice(0, 3)).toEqual([moved, moved, moved]);
  expect(said.slice(3).join("\n")).toBe(whole);
  expect(said).toHaveLength(6);
});

/** `n` columns of `width` characters, four spaces after each (a table of figures, no line break). */
const columns = (n: number, width = 8) =>
  Array.from({ length: n }, (_, i) => `${`c${i}`.padEnd(width, "x")}    `);

it("a rollover cut at spaces whose edit landed with its answer lost, then a crash: the next message starts at the next word, not with the spaces (a code block)", async () => {
  await startHeld();
  nextRuns(2, { finalAfterMs: 3_600_000 });
  const text = columns(1200);
  const asked = h.bot.post(MEMBER, dm("go"));
  const first = await h.bot.nextReply({ after: asked });
  feeds[0]!.push(...text.slice(0, 700));
  await runUntil(() => contentOf(first.id).length > 8_000);
  // The edit that cuts the text at its last spaces within the limit lands; its answer is lost.
  h.sandbox.control.failNext(1, {
    status: 502,
    after: true,
    methods: ["PATCH"],
    paths: [/^\/messages\/\d+$/],
  });
  feeds[0]!.push(...text.slice(700));
  await runUntil(() => h.sandbox.control.requests.some((r) => r.method === "PATCH" && r.status === 502));
  await h.bot.restart({ crash: true });
  // The run again streams the same text: the cut message is closed as it is, the rest goes on below.
  feeds[1]!.push(...text);
  feeds[1]!.end();
  await runUntil(() => results.length > 0);
  const said = h.bot.replies().map((m) => m.content);
  expect(said).toHaveLength(2);
  // Four spaces at its start would show the whole message as code.
  expect(said[1]!.slice(0, 12)).toBe(text[said[0]!.split("    ").length]!.slice(0, 12));
  expect(said.join("    ")).toBe(text.join("").trimEnd());
  expect(results[0]!.text).toBe(text.join(""));
});

it("a text that starts with a blank line, its edit landed with its answer lost, then a crash: the run again, streaming it in small chunks, never shows less than the message does", async () => {
  await startHeld();
  nextRuns(2, { finalAfterMs: 3_600_000 });
  // A language model's answer often starts with line breaks: the server drops them.
  const text = `\n\n${lines(10).join("")}`;
  const whole = text.trim();
  const asked = h.bot.post(MEMBER, dm("go"));
  const first = await h.bot.nextReply({ after: asked });
  h.sandbox.control.failNext(1, { status: 502, after: true, paths: [/^\/messages\/\d+$/] });
  feeds[0]!.push(text);
  await h.sandbox.control.waitFor(() => contentOf(first.id) === whole);
  await h.bot.restart({ crash: true });
  // The run again streams the same text eight characters at a time, an edit's turn after each.
  for (let at = 0; at < text.length; at += 8) {
    await h.sandbox.control.waitFor(() => h.runs === 2);
    feeds[1]!.push(text.slice(at, at + 8));
    await h.clock.advance(1_000);
    await h.settle();
  }
  feeds[1]!.end();
  await runUntil(() => results.length > 0);
  const shown = versions(h.sandbox, first.id);
  expect(shown.slice(shown.indexOf(whole))).toEqual([whole]);
});
