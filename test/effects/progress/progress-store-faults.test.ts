/**
 * `ctx.progress` when the state store loses a reply, in a daemon on a held test clock (time moves
 * only where the test moves it) against the sandbox: the rollover post is made and its record
 * written, but the write's reply is lost (a Redis connection closing after the command reached the
 * server). The next step finds the post made instead of posting the text again.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { defineBot } from "../../../src/bot/define-bot.ts";
import type { ProgressResult } from "../../../src/effects/progress/types.ts";
import { defaultOrg } from "../../../src/sandbox/org/default-org.ts";
import { startSandbox } from "../../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../../src/sandbox/types.ts";
import { FileStore } from "../../../src/state/file-store.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../../src/testing/in-process-daemon.ts";
import { TestClock } from "../../../src/testing/test-clock.ts";
import { gatedBackend, StoreGate } from "../../support/gated-store.ts";
import { Feed, lines } from "./feed.ts";

const BOT = "streamer@sandbox.example";
const MEMBER = "member@sandbox.example";

let feed = new Feed();
const results: ProgressResult[] = [];
let sandbox: Sandbox | undefined;
let running: InProcessDaemon | undefined;
let dir: string | undefined;
afterEach(async () => {
  feed.end();
  // No deadline: the clock stands still, and a run a failed case left stuck would hold the stop.
  await running?.stop({ deadlineMs: 0 });
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  [feed, running, sandbox, dir] = [new Feed(), undefined, undefined, undefined];
  results.length = 0;
});

const streamer = defineBot({
  setup(bot) {
    bot.command("go", async (ctx) => {
      const progress = await ctx.progress("Working…", { finalAfterMs: 3_600_000 });
      await progress.stream(feed);
      results.push(await progress.done());
    });
  },
});

it("a rollover post whose record's write lost its reply is not posted again", async () => {
  const clock = new TestClock({ held: true });
  const org = defaultOrg();
  const bots = [
    ...(org.bots ?? []),
    { email: BOT, full_name: "Streamer", type: "generic", owner: org.users![0]!.email },
  ];
  sandbox = await startSandbox({ clock, org: { ...org, bots } as typeof org });
  dir = await mkdtemp(join(tmpdir(), "bothost-progress-store-"));
  const gate = new StoreGate();
  const files = await FileStore.open(join(dir, "state"), { now: () => clock.now() });
  running = await startInProcessDaemon(
    sandbox,
    { streamer: { email: BOT, definition: streamer, extra: "handler_timeout: 1h" } },
    { store: gatedBackend(files, ["streamer", "effects"], gate), clock, stateDir: join(dir, "daemon") },
  );
  const control = sandbox.control;
  const botId = control.users().find((u) => u.email === BOT)!.user_id;
  const shown = () =>
    control
      .messages()
      .filter((m) => m.sender_id === botId)
      .map((m) => String(m.content));
  /** Move the clock a second at a time until `until` holds (at most two minutes of it). */
  const runUntil = async (until: () => boolean) => {
    for (let i = 0; i < 120 && !until(); i++) {
      await clock.advance(1_000);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(until()).toBe(true);
  };
  control.sendAs(MEMBER, { type: "direct", to: [BOT], content: "go" });
  await control.waitFor(() => shown().length === 1);
  const text = lines(150);
  feed.push(...text.slice(0, 90));
  await runUntil(() => shown()[0]!.length > 8_000);
  // The post that carries the text on is held; meanwhile its begun record was written. Once it is
  // made, the next write in the records (its result) lands, and its reply is lost.
  control.delay(3_600_000, { paths: [/^\/messages$/] });
  feed.push(...text.slice(90));
  await runUntil(() => control.delayed() === 1);
  gate.mode = "lose";
  control.delay(0);
  await gate.stoppedAt(1);
  feed.end();
  await runUntil(() => results.length > 0);
  expect(shown()).toHaveLength(2);
  expect(shown().join("\n")).toBe(text.join("").trimEnd());
  expect(results[0]!.messageIds).toHaveLength(2);
  // The step failed on the store, not on the chat server: the log says which.
  expect(
    running.logged(
      "progress: a step's record could not be written (the state store failed it); the next one retries",
    ),
  ).toHaveLength(1);
  expect(running.logged("an edit failed")).toHaveLength(0);
});
