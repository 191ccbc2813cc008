/**
 * `bothost backtest` after `bothost demo`, as a new user tries it: the demo's config puts the bots
 * on the embedded sandbox, which lives inside the process running them, so a backtest (another
 * process) cannot read its messages. The refusal says so, with no stack trace and exit code 2, and
 * says what to do instead; doing what it says (a sandbox of its own, the bot's zuliprc) gives a
 * backtest of the demo's moderation bot over real HTTP.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, expect, it } from "vitest";
import { runSandboxCommand } from "../../src/cli/sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, hasStackTrace, repoRoot, runCli } from "../support/cli.ts";

const BOT = "moderation-bot@acme.example";
const MALLORY = "mallory@acme.example";

let stop: AbortController | undefined;
let stopped: Promise<number> | undefined;
let dir: string | undefined;

afterEach(async () => {
  stop?.abort();
  await stopped;
  if (dir) await rm(dir, { recursive: true, force: true });
  stop = stopped = dir = undefined;
});

it("refuses the demo's config, saying why and what to do; doing that works", async () => {
  assertBuilt();
  const refused = await runCli(["backtest", "moderation", "-c", "bots/demo/bothost.yaml"]);
  expect(refused.code).toBe(2);
  expect(refused.stdout).toBe("");
  expect(hasStackTrace(refused.stderr)).toBe(false);
  // Why: where the config says so, and what that means.
  expect(refused.stderr).toContain(
    'bot "moderation" runs on the embedded sandbox (server.url: sandbox in bots/demo/bothost.yaml)',
  );
  expect(refused.stderr).toContain("no other process can read its messages");
  // What to do instead, with the demo's own org file and bot.
  expect(refused.stderr).toContain("bothost sandbox --org bots/demo/org.yaml --zuliprc-dir .sandbox");
  expect(refused.stderr).toContain(`zuliprc: .sandbox/${BOT}.zuliprc`);
  // Not an option mistake: the options' help has nothing to offer.
  expect(refused.stderr).not.toContain("--help");

  // Doing what it says: a sandbox of its own (port 0 here), someone floods #general on it, and a
  // config that gives the bot the zuliprc the sandbox wrote.
  dir = await mkdtemp(join(tmpdir(), "bothost-backtest-sandbox-"));
  let started: (sandbox: Sandbox) => void = () => {};
  const ready = new Promise<Sandbox>((resolve) => {
    started = resolve;
  });
  stop = new AbortController();
  const quiet = new Writable({ write: (_chunk, _enc, done) => done() });
  stopped = runSandboxCommand(
    ["--port", "0", "--org", "bots/demo/org.yaml", "--zuliprc-dir", join(dir, ".sandbox")],
    { stdout: quiet, stderr: quiet, signal: stop.signal, onStarted: started },
  );
  const sandbox = await ready;
  for (let i = 1; i <= 4; i++) {
    sandbox.control.sendAs(MALLORY, {
      type: "stream",
      to: "general",
      topic: "deals",
      content: `Amazing deal #${i}: https://deals.example/${i}`,
    });
  }
  const config = join(dir, "backtest.yaml");
  await writeFile(
    config,
    [
      "bots:",
      "  moderation:",
      `    module: ${join(repoRoot, "bots/moderation.ts")}`,
      `    zuliprc: .sandbox/${BOT}.zuliprc`,
      "    settings:",
      "      rules:",
      "        flood: { max_messages: 3, per_seconds: 60 }",
    ].join("\n"),
  );
  const { code, stdout, stderr } = await runCli(["backtest", "moderation", "-c", config]);
  expect(stderr).toBe("");
  expect(code).toBe(0);
  expect(stdout).toMatch(/^moderation: 4 messages from \S+ to \S+; would act on 1\./);
  expect(stdout).toMatch(/ Mallory Spammer +flood +report message \d+ as spam/);
});
