/**
 * `bothost status` against a running daemon (in this process, its listener on loopback), run as
 * a subprocess as an operator would.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type InProcessDaemon, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { assertBuilt, hasStackTrace, runCli } from "../support/cli.ts";
import { freePort } from "../support/free-port.ts";

let sandbox: Sandbox;
let running: InProcessDaemon;
let dir: string;
let file: string;
let port: number;

beforeAll(async () => {
  assertBuilt();
  sandbox = await startSandbox();
  for (const email of ["echo-bot@sandbox.example", "rotated-bot@sandbox.example"]) {
    sandbox.control.createUser({ email, full_name: email, bot: "generic", owner: "owner@sandbox.example" });
  }
  port = await freePort();
  dir = await mkdtemp(join(tmpdir(), "bothost-status-"));
  const quiet = defineBot({
    setup(bot) {
      bot.cron("0 3 * * *", { id: "nightly" }, () => {});
    },
  });
  running = await startInProcessDaemon(
    sandbox,
    {
      echo: { email: "echo-bot@sandbox.example", definition: quiet },
      rotated: { email: "rotated-bot@sandbox.example", apiKey: "not-the-key-0123456789", definition: quiet },
    },
    { global: `http:\n  listen: 127.0.0.1:${port}` },
  );
  file = join(dir, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: ${sandbox.url}\nstate:\n  path: ${running.stateDir}\nhttp:\n  listen: 127.0.0.1:${port}\nbots:\n` +
      "  echo:\n    module: ./x.ts\n    email: echo-bot@sandbox.example\n    api_key: any-key-0123456789\n",
  );
});

afterAll(async () => {
  await running?.stop();
  await sandbox?.stop();
  await rm(dir, { recursive: true, force: true });
});

it("--json describes every bot: state, reason, queue, counts and next runs", async () => {
  const { code, stdout, stderr } = await runCli(["status", "--json", "-c", file]);
  expect(stderr).toBe("");
  expect(code).toBe(1); // one bot failed
  const status = JSON.parse(stdout);
  expect(status).toMatchObject({
    version: expect.any(String),
    pid: process.pid,
    uptimeSeconds: expect.any(Number),
  });
  const [echo, rotated] = status.bots;
  expect(echo).toMatchObject({
    name: "echo",
    state: "running",
    queueId: expect.any(String),
    queueAgeSeconds: expect.any(Number),
    handled: expect.any(Number),
    failed: 0,
    deadLetters: 0,
    nextRuns: [{ name: "nightly", at: expect.stringMatching(/T03:00:00\.000Z$/) }],
    server: { version: expect.any(String), featureLevel: expect.any(Number) },
  });
  expect(rotated).toMatchObject({
    name: "rotated",
    state: "failed",
    reason: expect.stringMatching(/^the server rejected the bot's credentials: .*, then reload; /),
  });
  expect(stdout).not.toContain("not-the-key-0123456789");
});

it("prints a table and the reasons of bots in trouble", async () => {
  const { stdout } = await runCli(["status", "-c", file]);
  expect(stdout).toMatch(
    /^bothost \S+, pid \d+, up \S+, 2 bots\n\nBOT +STATE +QUEUE AGE +LAST EVENT +HANDLED +FAILED +DEAD +DIALOGS +NEXT RUN\n/,
  );
  expect(stdout).toMatch(/^echo +running +/m);
  expect(stdout).toMatch(/^rotated +failed +/m);
  expect(stdout).toContain("rotated: the server rejected the bot's credentials");
});

it("says clearly when no daemon answers, without a stack trace", async () => {
  const idle = join(dir, "idle.yaml");
  await writeFile(
    idle,
    `server:\n  url: ${sandbox.url}\nstate:\n  path: ${join(dir, "idle")}\nhttp:\n  listen: 127.0.0.1:${await freePort()}\nbots:\n` +
      `  echo:\n    module: ${JSON.stringify(resolve("bots/echo.ts"))}\n    email: echo-bot@sandbox.example\n    api_key: any-key-0123456789\n`,
  );
  const r = await runCli(["status", "-c", idle]);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(
    /^bothost status: no daemon answers: the admin socket \S+admin\.sock: no such socket; http:\/\/127\.0\.0\.1:\d+ \(http\.listen\): connection refused\. Is it running with this config\? \[DAEMON_UNREACHABLE\]\n$/,
  );
  expect(hasStackTrace(r.stderr)).toBe(false);
});

it("names the problem of an http: it could not use, without its token", async () => {
  const bad = join(dir, "bad-http.yaml");
  await writeFile(
    bad,
    `server:\n  url: ${sandbox.url}\nstate:\n  path: ${join(dir, "bad-http")}\nhttp:\n  listen: 127.0.0.1:${port}\n  admin_token: tok-abc\nbots:\n` +
      "  echo:\n    module: ./x.ts\n    email: echo-bot@sandbox.example\n    api_key: any-key-0123456789\n",
  );
  const r = await runCli(["status", "-c", bad]);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(
    /no such socket\. Is it running with this config\? http: was not tried, as it has problems:\n\S*bad-http\.yaml:7:16 http\.admin_token: is too short/,
  );
  expect(r.stderr).not.toContain("tok-abc");
  expect(hasStackTrace(r.stderr)).toBe(false);
});
