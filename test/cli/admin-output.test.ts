/**
 * The admin commands' output against a real daemon (`bothost run` on a sandbox), as a script or an
 * operator reads it: `reload --json` prints JSON on stdout whether the config is applied or refused
 * (exit 2); `status`'s budget line agrees with `status --json` after calls the daemon's own client
 * did not make (another process, or the daemon before a reload).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { BucketStatus, DaemonStatus } from "../../src/http/daemon-status.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, killAll, repoRoot, runCli, spawnCli } from "../support/cli.ts";
import { botEmail, orgWithBots, startE2eSandbox } from "../support/e2e-daemon.ts";

let sandbox: Sandbox;
let dir: string;
let file: string;
let key: string;
const configText = () =>
  `server:\n  url: ${sandbox.url}\nstate:\n  path: ${path.join(dir, "state")}\nlog:\n  level: info\n  pretty: false\n` +
  `bots:\n  echo:\n    module: ${path.join(repoRoot, "bots/echo.ts")}\n    email: ${botEmail(0)}\n    api_key: ${key}\n`;

beforeAll(async () => {
  assertBuilt();
  sandbox = await startE2eSandbox(orgWithBots(1));
  key = sandbox.control.apiKeyOf(botEmail(0));
  dir = await mkdtemp(path.join(tmpdir(), "bothost-admin-output-"));
  file = path.join(dir, "bothost.yaml");
});

beforeEach(() => writeFile(file, configText()));

afterEach(killAll);

afterAll(async () => {
  await sandbox?.stop();
  await rm(dir, { recursive: true, force: true });
});

/**
 * Each case starts a daemon process and runs three CLI processes beside it: on a loaded 2-core
 * machine that takes 20 s and more, past vitest's default 20 s.
 */
const TIMEOUT = { timeout: 60_000 };

describe("bothost reload --json", TIMEOUT, () => {
  it("prints the result as JSON on stdout, whether the config is applied or refused", async () => {
    const daemon = spawnCli(["run", "-c", file]);
    await daemon.waitForLog((l) => l.msg === "daemon started");

    const applied = await runCli(["reload", "--json", "-c", file]);
    expect(applied.stderr).toBe("");
    expect(applied.code).toBe(0);
    expect(JSON.parse(applied.stdout)).toEqual({
      refused: false,
      add: [],
      remove: [],
      restart: [],
      keep: ["echo"],
      failed: [],
      needRestart: [],
    });

    await writeFile(file, `${configText()}    concurrency: many\n`);
    const refused = await runCli(["reload", "--json", "-c", file]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe("");
    const answer = JSON.parse(refused.stdout) as { refused: boolean; problems: string[] };
    expect(answer.refused).toBe(true);
    expect(answer.problems).toHaveLength(1);
    expect(answer.problems[0]).toMatch(/bothost\.yaml:13:18 bots\.echo\.concurrency: /);
    expect(refused.stdout).not.toContain(key);

    // Without --json the same refusal is text on stderr.
    const plain = await runCli(["reload", "-c", file]);
    expect(plain.code).toBe(2);
    expect(plain.stdout).toBe("");
    expect(plain.stderr).toContain("the daemon refused the new config and keeps the old one:\n");
    expect(daemon.child.exitCode).toBeNull();
    daemon.kill("SIGTERM");
    await daemon.exited;
  });
});

describe("bothost status: the budget line", TIMEOUT, () => {
  it("shows used and left as the JSON's remainingHour says, counting calls made before the daemon", async () => {
    // 40 calls by the same account before the daemon starts: the server counts them, the daemon's
    // client does not.
    const auth = `Basic ${Buffer.from(`${botEmail(0)}:${key}`).toString("base64")}`;
    for (let i = 0; i < 40; i++) {
      const res = await fetch(`${sandbox.url}/api/v1/users/me`, { headers: { authorization: auth } });
      expect(res.status).toBe(200);
    }
    const daemon = spawnCli(["run", "-c", file]);
    await daemon.waitForLog((l) => l.msg === "daemon started");

    const json = await runCli(["status", "--json", "-c", file]);
    expect(json.code, json.stderr).toBe(0);
    const other = (JSON.parse(json.stdout) as DaemonStatus).bots[0]!.budget!.other;
    // The reproduction: the server's count (in remainingHour) exceeds the daemon's own.
    expect(other.perHour - other.remainingHour).toBeGreaterThanOrEqual(other.usedHour + 40);

    const text = await runCli(["status", "-c", file]);
    const line =
      /^echo: calls used this hour: event queue (\d+)\/(\d+) \((\d+) left\), other (\d+)\/(\d+) \((\d+) left\); polls/m.exec(
        text.stdout,
      );
    expect(line, text.stdout).not.toBeNull();
    const [used, perHour, left] = line!.slice(4, 7).map(Number) as [number, number, number];
    // The bot may make calls between the reads: "left" lies between the two --json reads'.
    const again = (JSON.parse((await runCli(["status", "--json", "-c", file])).stdout) as DaemonStatus)
      .bots[0]!.budget!.other as BucketStatus;
    expect(perHour).toBe(again.perHour);
    expect(used + left).toBe(perHour);
    expect(left).toBeGreaterThanOrEqual(again.remainingHour);
    expect(left).toBeLessThanOrEqual(other.remainingHour);
    expect(used).toBeGreaterThanOrEqual(40);
    daemon.kill("SIGTERM");
    await daemon.exited;
  });
});
