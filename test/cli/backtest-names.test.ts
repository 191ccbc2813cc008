/**
 * `bothost backtest` names people by name, as an operator reads a moderation report: the sender
 * of each message, and the people a captured direct message goes to. The organization hides
 * emails from the bot (as most do), so the server gives it `user{id}@host` for every sender; the
 * names come from the history itself, and a recipient who sent nothing in the range is asked of
 * the server once, not once per message.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { BacktestReport } from "../../src/daemon/backtest.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { writeBacktestConfig } from "../support/backtest-config.ts";
import { assertBuilt, runCli } from "../support/cli.ts";

const BOT = "warner-bot@sandbox.example";
const MEL = "member@sandbox.example";
const MALLORY = "mallory@sandbox.example";
const MO = "mo@sandbox.example";

let sandbox: Sandbox;
let dir: string;
let file: string;
let ids: { mel: number; mallory: number; mo: number };
const crypto: number[] = [];
const cryptoSenders: string[] = [];

beforeAll(async () => {
  assertBuilt();
  sandbox = await startSandbox({
    rateLimit: true,
    org: {
      realm: { host: "sandbox.example", email_address_visibility: "admins" },
      users: [
        { email: "owner@sandbox.example", full_name: "Olive Owner", role: "owner" },
        { email: MEL, full_name: "Mel Member" },
        { email: MALLORY, full_name: "Mallory Spammer" },
        { email: MO, full_name: "Mo Derator", role: "moderator" },
      ],
      bots: [{ email: BOT, full_name: "Warner", owner: "owner@sandbox.example" }],
      channels: [{ name: "general", subscribers: [MEL, MALLORY, MO, BOT] }],
    },
  });
  const idOf = (email: string) => sandbox.control.users().find((u) => u.email === email)!.user_id;
  ids = { mel: idOf(MEL), mallory: idOf(MALLORY), mo: idOf(MO) };
  for (let i = 0; i < 60; i++) {
    const from = i % 2 === 0 ? MEL : MALLORY;
    const content = i % 10 === 3 || i === 20 ? `free crypto, offer ${i}` : `message ${i} about the release`;
    const { id } = sandbox.control.sendAs(from, { type: "stream", to: "general", topic: "t", content });
    if (content.startsWith("free")) {
      crypto.push(id);
      cryptoSenders.push(from);
    }
  }
  dir = await mkdtemp(join(tmpdir(), "bothost-backtest-names-"));
  file = await writeBacktestConfig(dir, sandbox, {
    name: "warner",
    module: "test/fixtures/bots/dm-warner.ts",
    email: BOT,
    settings: `{ moderator: ${ids.mo} }`,
  });
});

afterAll(async () => {
  await sandbox?.stop();
  await rm(dir, { recursive: true, force: true });
});

it("names each sender and each direct message's recipients, asking the server once for a stranger", async () => {
  const { code, stdout, stderr } = await runCli(["backtest", "warner", "-c", file]);
  expect(stderr).toBe("");
  expect(code).toBe(0);
  const first = crypto[0]!;
  expect(stdout).toMatch(
    new RegExp(
      `\\n${first} +${sandbox.url}/#narrow/id/${first} +Mallory Spammer +crypto +` +
        `send a direct message to Mallory Spammer: "Please don't post offers\\."\\n +` +
        `send a direct message to Mo Derator, Mallory Spammer: "FYI: message ${first} offers crypto\\."\\n`,
    ),
  );
  expect(stdout).toContain("Mel Member");
  // Neither a placeholder email (user12@host) nor a bare id names anyone.
  expect(stdout).not.toMatch(/user\d+@sandbox\.example/);
  expect(stdout).not.toMatch(/direct message to \d/);
  // Mo sent nothing in the range: one GET /users/{id}, whatever the number of messages.
  const lookups = sandbox.control.requests.filter(
    (r) => r.email === BOT && r.method === "GET" && /^\/users\/\d+$/.test(r.path),
  );
  expect(lookups.map((r) => r.path)).toEqual([`/users/${ids.mo}`]);
});

it("--json gives each finding's sender by name and by id", async () => {
  const { code, stdout } = await runCli(["backtest", "warner", "--json", "-c", file]);
  expect(code).toBe(0);
  const report = JSON.parse(stdout) as BacktestReport;
  expect(report.findings.map((f) => f.id)).toEqual(crypto);
  expect(report.findings.map((f) => [f.sender, f.senderId])).toEqual(
    cryptoSenders.map((from) => (from === MEL ? ["Mel Member", ids.mel] : ["Mallory Spammer", ids.mallory])),
  );
  expect(report.findings[0]!.actions.map((a) => a.does)).toEqual([
    `send a direct message to Mallory Spammer: "Please don't post offers."`,
    `send a direct message to Mo Derator, Mallory Spammer: "FYI: message ${crypto[0]} offers crypto."`,
  ]);
});
