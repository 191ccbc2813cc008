/**
 * `bothost sandbox --data FILE` killed with SIGKILL right after it answered a change (getting
 * started suggests such a sandbox to see a bot's dialogs and bookings survive a kill -9): started
 * again on the file, it still has the message, and the next message gets a new id. A message it
 * had answered for and then lost would leave its id to the next one, which a bot that handled the
 * first (its cursor past that id) would take for handled and skip. The sandbox runs as a
 * subprocess (the CLI), over HTTP. A scheduled message it sends is written before the poll that
 * carries it answers (data-before-poll.test.ts, on the sandbox's own clock).
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
