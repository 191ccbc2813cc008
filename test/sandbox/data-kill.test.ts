/**
 * `bothost sandbox --data FILE` killed with SIGKILL right after it answered a change (getting
 * started suggests such a sandbox to see a bot's dialogs and bookings survive a kill -9): started
 * again on the file, it still has the message, and the next message gets a new id. A message it
 * had answered for and then lost would leave its id to the next one, which a bot that handled the
 * first (its cursor past that id) would take for handled and skip. The sandbox runs as a
 * subprocess (the CLI), over HTTP.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { assertBuilt, type CliProcess, killAll, spawnCli } from "../support/cli.ts";
import { basicAuth, Caller } from "../support/sandbox/fixture.ts";

const MEMBER = "member@sandbox.example";
let dir: string | undefined;

afterEach(async () => {
  await killAll();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The sandbox started on `data`: its URL, once it has said all (its zuliprc files written). */
async function started(args: string[]): Promise<{ proc: CliProcess; url: string }> {
  const proc = spawnCli(["sandbox", "--port", "0", ...args]);
  const deadline = Date.now() + 15_000;
  for (;;) {
    const url = /Sandbox listening on (http:\/\/\S+)/.exec(proc.stdout())?.[1];
    if (url && proc.stdout().includes("Press Ctrl+C to stop.")) return { proc, url };
    if (Date.now() > deadline) throw new Error(`the sandbox did not start:\n${proc.stderr()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The first sandbox, on a data file of a fresh folder: its accounts' keys read from their zuliprc files. */
async function firstSandbox() {
  assertBuilt();
  dir = await mkdtemp(path.join(tmpdir(), "bothost-sandbox-kill-"));
  const data = path.join(dir, "data.json");
  const rcDir = path.join(dir, "rc");
  const first = await started(["--data", data, "--zuliprc-dir", rcDir]);
  const keyOf = async (email: string) =>
    /^key=(.*)$/m.exec(await readFile(path.join(rcDir, `${email}.zuliprc`), "utf8"))![1]!;
  return { data, first, keyOf };
}

it("a change the sandbox answered is kept in its data file through a kill -9, and its id is not given again", {
  timeout: 60_000,
}, async () => {
  const { data, first, keyOf } = await firstSandbox();
  const key = await keyOf(MEMBER);
  const dm = (url: string, content: string) =>
    new Caller(url, { authorization: basicAuth(MEMBER, key) }).post("/messages", {
      type: "direct",
      to: JSON.stringify(["owner@sandbox.example"]),
      content,
    });

  // One message written to the file already (the accounts, their keys with it), then the one killed.
  const earlier = await dm(first.url, "written before");
  await new Promise((r) => setTimeout(r, 1_000));
  const sent = await dm(first.url, "kept through a kill");
  expect(sent.status).toBe(200);
  first.proc.kill("SIGKILL");
  expect((await first.proc.exited).signal).toBe("SIGKILL");

  const second = await started(["--data", data]);
  const member = new Caller(second.url, { authorization: basicAuth(MEMBER, key) });
  const read = await member.get("/messages", {
    anchor: "newest",
    num_before: 5,
    num_after: 0,
    apply_markdown: false,
  });
  expect(read.status).toBe(200);
  expect(read.body.messages.map((m: { id: number; content: string }) => [m.id, m.content])).toEqual([
    [earlier.body.id, "written before"],
    [sent.body.id, "kept through a kill"],
  ]);
  const next = await dm(second.url, "after the restart");
  expect(next.body.id).toBeGreaterThan(sent.body.id);
  second.proc.kill("SIGTERM");
  expect((await second.proc.exited).code).toBe(0);
});

it("a scheduled message the sandbox sent is in its data file before a poll hands it out, through a kill -9", {
  timeout: 150_000,
}, async () => {
  const { data, first, keyOf } = await firstSandbox();
  const owner = "owner@sandbox.example";
  const as = (url: string, email: string, key: string) =>
    new Caller(url, { authorization: basicAuth(email, key) });
  const [memberKey, ownerKey] = [await keyOf(MEMBER), await keyOf(owner)];
  const reader = as(first.url, owner, ownerKey);
  const queue = await reader.post("/register", { event_types: JSON.stringify(["message"]) });
  expect(queue.status).toBe(200);
  // The sandbox sends scheduled messages at whole minutes: the next one at least 5 s away.
  const at = Math.ceil((Date.now() / 1000 + 5) / 60) * 60;
  const ownerId = (await reader.get("/users/me")).body.user_id as number;
  const booked = await as(first.url, MEMBER, memberKey).post("/scheduled_messages", {
    type: "direct",
    to: JSON.stringify([ownerId]),
    content: "sent while booked",
    scheduled_delivery_timestamp: String(at),
  });
  expect(booked.status).toBe(200);
  let sent: { id: number } | undefined;
  for (let last = queue.body.last_event_id as number; sent === undefined; ) {
    const poll = await reader.get("/events", { queue_id: queue.body.queue_id, last_event_id: String(last) });
    for (const event of poll.body.events as { id: number; type: string; message?: { id: number } }[]) {
      last = event.id;
      if (event.type === "message") sent = event.message;
    }
  }
  first.proc.kill("SIGKILL");
  await first.proc.exited;

  const second = await started(["--data", data]);
  const read = await as(second.url, owner, ownerKey).get("/messages", {
    anchor: "newest",
    num_before: 5,
    num_after: 0,
    apply_markdown: false,
  });
  expect(read.body.messages.map((m: { id: number; content: string }) => [m.id, m.content])).toEqual([
    [sent!.id, "sent while booked"],
  ]);
  const next = await as(second.url, MEMBER, memberKey).post("/messages", {
    type: "direct",
    to: JSON.stringify([owner]),
    content: "after the restart",
  });
  expect(next.body.id).toBeGreaterThan(sent!.id);
  second.proc.kill("SIGTERM");
  expect((await second.proc.exited).code).toBe(0);
});
