/**
 * `bothost reload --json` against a real daemon (`bothost run` on a sandbox): what changed as JSON
 * on stdout, and a refused config as JSON on stdout too (exit 2), for a script to parse.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, killAll, repoRoot, runCli, spawnCli } from "../support/cli.ts";
import { botEmail, orgWithBots, startE2eSandbox } from "../support/e2e-daemon.ts";

const MODULE = path.join(repoRoot, "bots/echo.ts");

let sandbox: Sandbox;
let dir: string;
let file: string;
let key: string;

beforeAll(async () => {
  assertBuilt();
  sandbox = await startE2eSandbox(orgWithBots(1));
  key = sandbox.control.apiKeyOf(botEmail(0));
  dir = await mkdtemp(path.join(tmpdir(), "bothost-reload-json-"));
  file = path.join(dir, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: ${sandbox.url}\nstate:\n  path: ${path.join(dir, "state")}\nlog:\n  level: info\n  pretty: false\n` +
      `bots:\n  echo:\n    module: ${MODULE}\n    email: ${botEmail(0)}\n    api_key: ${key}\n`,
  );
});

afterEach(killAll);

afterAll(async () => {
  await sandbox?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("bothost reload --json", () => {
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

    const text = await readFile(file, "utf8");
    await writeFile(file, `${text}    concurrency: many\n`);
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
