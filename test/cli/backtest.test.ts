/**
 * `bothost backtest` as an operator runs it (the built CLI as a subprocess) against a sandbox
 * with its rate limiter on and a seeded history: it lists exactly the messages each rule should
 * trip (and none of those that come close), the server receives no write, the output is a table
 * or JSON, and a progress bar appears on a terminal only.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BacktestReport } from "../../src/daemon/backtest.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { writeBacktestConfig } from "../support/backtest-config.ts";
import { assertBuilt, cliPath, hasStackTrace, repoRoot, runCli } from "../support/cli.ts";

const BOT = "keeper-bot@sandbox.example";
const MEMBER = "member@sandbox.example";
const OWNER = "owner@sandbox.example";
const KEEPER = { name: "keeper", module: "test/fixtures/bots/keyword-reporter.ts", email: BOT };

let sandbox: Sandbox;
let dir: string;
let file: string;
const expected = { crypto: [] as number[], shouting: [] as number[], explode: [] as number[] };

/** The message the seeded history holds at position i: mostly chat, some made to trip a rule. */
function seeded(i: number): { content: string; trips?: keyof typeof expected } {
  if (i % 37 === 5) return { content: `Get FREE crypto today, offer ${i}`, trips: "crypto" };
  if (i % 37 === 6) return { content: `cryptography talk ${i}: free cryptocurrency, free cryptography` };
  if (i % 41 === 7) return { content: "WHY IS THE BUILD BROKEN AGAIN", trips: "shouting" };
  if (i % 41 === 8) return { content: "WHY is the build broken again, ANYONE?" };
  if (i === 150) return { content: "explode", trips: "explode" };
  return { content: `message ${i} about the release plan` };
}

beforeAll(async () => {
  assertBuilt();
  sandbox = await startSandbox({ rateLimit: true });
  sandbox.control.createUser({
    email: BOT,
    full_name: "Keeper",
    bot: "generic",
    owner: OWNER,
    channels: ["general"],
  });
  for (let i = 0; i < 400; i++) {
    const { content, trips } = seeded(i);
    const from = i % 3 === 0 ? OWNER : MEMBER;
    const { id } = sandbox.control.sendAs(from, {
      type: "stream",
      to: "general",
      topic: `t${i % 7}`,
      content,
    });
    if (trips) expected[trips].push(id);
  }
  dir = await mkdtemp(join(tmpdir(), "bothost-backtest-"));
  file = await writeBacktestConfig(dir, sandbox, KEEPER);
});

afterAll(async () => {
  await sandbox?.stop();
  await rm(dir, { recursive: true, force: true });
});

const writesByBot = () =>
  sandbox.control.requests.filter(
    (r) =>
      r.email === BOT &&
      r.method !== "GET" &&
      r.path !== "/register" &&
      !(r.method === "DELETE" && r.path === "/events"),
  );

describe("bothost backtest", () => {
  it("--json lists exactly the messages each rule trips, and the server receives no write", async () => {
    const { code, stdout, stderr } = await runCli(["backtest", "keeper", "--json", "-c", file]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as BacktestReport;
    expect(report.scanned).toBe(400);
    const tripped = (rule: string) => report.findings.filter((f) => f.rules.includes(rule)).map((f) => f.id);
    expect(tripped("crypto")).toEqual(expected.crypto);
    expect(tripped("shouting")).toEqual(expected.shouting);
    expect(report.totals).toEqual({ crypto: expected.crypto.length, shouting: expected.shouting.length });
    const crypto = report.findings.find((f) => f.id === expected.crypto[0])!;
    expect(crypto.actions.map((a) => a.does)).toEqual([
      `report message ${crypto.id} as spam: "offers free crypto"`,
    ]);
    expect(crypto.link).toBe(`${sandbox.url}/#narrow/id/${crypto.id}`);
    const shout = report.findings.find((f) => f.id === expected.shouting[0])!;
    expect(shout.actions.map((a) => a.does)).toEqual([
      `send to #general > ${shout.where.split(" > ")[1]}: "Please don't shout."`,
    ]);
    expect(report.findings.filter((f) => f.error)).toMatchObject([
      { id: expected.explode[0], error: "cannot handle explode", actions: [] },
    ]);
    expect(writesByBot()).toEqual([]);
    expect(sandbox.control.messages().filter((m) => m.sender_email === BOT)).toEqual([]);
  });

  it("prints a table and totals; piped, it draws no progress bar", async () => {
    const { code, stdout, stderr } = await runCli(["backtest", "keeper", "--channel", "general", "-c", file]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(stdout).toMatch(/^keeper: 400 messages from \S+ to \S+; would act on \d+; handler failed on 1\./);
    expect(stdout).toMatch(/\nID +LINK +SENDER +RULE +ACTION\n/);
    const first = expected.crypto[0];
    expect(stdout).toMatch(
      new RegExp(
        `\\n${first} +${sandbox.url}/#narrow/id/${first} +Mel Member +crypto +report message ${first} as spam`,
      ),
    );
    expect(stdout).toMatch(
      new RegExp(
        `Messages per rule:\\n  crypto    ${expected.crypto.length}\\n  shouting  ${expected.shouting.length}`,
      ),
    );
  });

  it("on a terminal, draws a progress bar on stderr", async () => {
    const command = [process.execPath, cliPath, "backtest", "keeper", "--limit", "200", "-c", file]
      .map((a) => `'${a}'`)
      .join(" ");
    // `script` gives the command a pseudo-terminal, as an operator's shell would.
    const { stdout } = await promisify(execFile)("script", ["-qec", command, "/dev/null"], { cwd: repoRoot });
    expect(stdout).toContain("200/200 messages");
    expect(stdout).toContain("█");
    expect(stdout).toContain("keeper: 200 messages");
  });

  it("refuses bad options and unknown bots with exit code 2 and no stack trace", async () => {
    for (const [args, text] of [
      [["backtest", "nobody", "-c", file], 'no bot "nobody"'],
      [["backtest", "keeper", "--since", "soon", "-c", file], "--since soon: give an age like 30d"],
      [
        ["backtest", "keeper", "--since", "1d", "--from", "3", "-c", file],
        "give --since or --from, not both",
      ],
      [["backtest", "keeper", "--limit", "0", "-c", file], "--limit 0"],
      [
        ["backtest", "keeper", "--channel", "genral", "-c", file],
        "--channel genral: the server refused it: Invalid narrow operator: unknown channel genral",
      ],
    ] as [string[], string][]) {
      const { code, stderr } = await runCli(args);
      expect(code).toBe(2);
      expect(stderr).toContain(text);
      expect(hasStackTrace(stderr)).toBe(false);
    }
  });
});

describe("a 10,000-message history", () => {
  it("is read in pages of 1,000 within the rate limit and every message is run", async () => {
    const big = await startSandbox({ rateLimit: true });
    const bigDir = await mkdtemp(join(tmpdir(), "bothost-backtest-big-"));
    try {
      big.control.createUser({
        email: BOT,
        full_name: "Keeper",
        bot: "generic",
        owner: OWNER,
        channels: ["general"],
      });
      for (let i = 0; i < 10_000; i++) {
        big.control.sendAs(MEMBER, {
          type: "stream",
          to: "general",
          topic: `t${i % 50}`,
          content: seeded(i).content,
        });
      }
      const bigFile = await writeBacktestConfig(bigDir, big, KEEPER);
      const { code, stdout } = await runCli(["backtest", "keeper", "--json", "-c", bigFile]);
      expect(code).toBe(0);
      const report = JSON.parse(stdout) as BacktestReport;
      expect(report.scanned).toBe(10_000);
      expect(report.totals.crypto).toBe(
        Array.from({ length: 10_000 }, (_, i) => seeded(i).trips).filter((t) => t === "crypto").length,
      );
      const pages = big.control.requests.filter(
        (r) => r.email === BOT && r.method === "GET" && r.path === "/messages",
      );
      expect(pages).toHaveLength(11); // ten full pages, and one that finds the oldest
      expect(big.control.requests.filter((r) => r.status === 429)).toEqual([]);
    } finally {
      await big.stop();
      await rm(bigDir, { recursive: true, force: true });
    }
  }, 120_000);
});
