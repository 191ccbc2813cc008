/**
 * The admin socket against a real daemon (`bothost run` as a child process) whose config has no
 * `http:`: `status`, `reload` and `failed` answer over it; `status` still describes the running
 * bots when the config file is broken and the key variable is unset in the operator's shell; the
 * socket is owner-only, removed at a clean stop, and a stale one left by `kill -9` is replaced.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import {
  assertBuilt,
  type CliProcess,
  hasStackTrace,
  killAll,
  repoRoot,
  runCli,
  spawnCli,
} from "../support/cli.ts";
import { botEmail, orgWithBots, send, startE2eSandbox } from "../support/e2e-daemon.ts";

const MODULE = path.join(repoRoot, "test/fixtures/admin/fails-once.mjs");
const VARIABLE = "GREETER_BOT_API_KEY";

let sandbox: Sandbox;
let dir: string;
let file: string;
let socket: string;
let key: string;
const outputs: string[] = [];

/** The CLI as an operator's shell runs it: no key variable set. */
async function cli(...args: string[]) {
  const r = await runCli([...args, "-c", file]);
  outputs.push(r.stdout, r.stderr);
  return r;
}

function startRun(): CliProcess {
  return spawnCli(["run", "-c", file], { env: { [VARIABLE]: key } });
}

const configText = () =>
  `server:\n  url: ${sandbox.url}\nstate:\n  path: ${path.join(dir, "state")}\nlog:\n  level: debug\n  pretty: false\n` +
  `bots:\n  greeter:\n    module: ${MODULE}\n    email: ${botEmail(0)}\n    api_key: \${${VARIABLE}}\n` +
  "    retries:\n      attempts: 1\n";

beforeAll(async () => {
  assertBuilt();
  sandbox = await startE2eSandbox(orgWithBots(1));
  key = sandbox.control.apiKeyOf(botEmail(0));
  dir = await mkdtemp(path.join(tmpdir(), "bothost-admin-"));
  file = path.join(dir, "bothost.yaml");
  socket = path.join(dir, "state", "admin.sock");
  await writeFile(file, configText());
});

afterEach(async () => {
  await killAll();
  for (const text of outputs.splice(0))
    expect(text.includes(key), "the API key leaked into the output").toBe(false);
});

afterAll(async () => {
  await sandbox?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("a daemon started from a config with no http:", () => {
  // About ten CLI processes one after another: on a loaded 2-core machine that passes 20 s.
  it("answers status, reload and failed list|show|retry|drop on its owner-only socket", {
    timeout: 45_000,
  }, async () => {
    await writeFile(file, configText());
    const daemon = startRun();
    await daemon.waitForLog((l) => l.msg === "daemon started");
    expect((await stat(socket)).mode & 0o777).toBe(0o600);

    const status = await cli("status", "--json");
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      pid: daemon.pid,
      bots: [{ name: "greeter", state: "running" }],
      configProblems: [],
      unsetVariables: [VARIABLE],
    });
    expect((await cli("status")).stdout).toMatch(/^greeter +running +/m);

    send(sandbox, "fail first");
    send(sandbox, "fail second");
    await expect
      .poll(
        async () =>
          JSON.parse((await cli("failed", "list", "--json")).stdout).map((l: { id: string }) => l.id),
        {
          timeout: 15_000,
          interval: 200,
        },
      )
      .toEqual(["greeter/1", "greeter/2"]);
    const shown = await cli("failed", "show", "greeter/1");
    expect(shown.stdout).toContain("failing on message");

    const retry = await cli("failed", "retry", "greeter/1");
    expect(retry.stdout).toBe("Retry requested for 1: greeter/1 (the daemon handles them now)\n");
    // The bot succeeds on the second run, so the letter leaves the list.
    await expect
      .poll(async () => (await cli("failed", "list")).stdout, { timeout: 15_000, interval: 200 })
      .toMatch(/^ID .*\ngreeter\/2 /);
    expect(await cli("failed", "drop", "--all")).toMatchObject({ code: 0, stdout: "Dropped 1: greeter/2\n" });
    expect((await cli("failed", "list")).stdout).toBe("No dead letters.\n");

    const reload = await cli("reload");
    expect(reload).toMatchObject({ code: 0, stdout: "Nothing changed.\nUnchanged: 1 bot\n" });
    await daemon.waitForLog((l) => l.msg === "config reloaded");

    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(socket)).toBe(false);
  });

  // A daemon and several CLI processes: on a loaded 2-core machine that passes 20 s.
  it("status describes the running bots and lists the problems of a broken config on disk", {
    timeout: 45_000,
  }, async () => {
    await writeFile(file, configText());
    const daemon = startRun();
    await daemon.waitForLog((l) => l.msg === "daemon started");
    // A typo in the bots' part of the file, below state:; the key variable is not set in the shell.
    const broken = configText().replace("    retries:\n", "    retries:\n      atempts: 2\n");
    await writeFile(file, broken);
    const line = broken.split("\n").indexOf("      atempts: 2") + 1;

    const json = await cli("status", "--json");
    expect(json.code, json.stderr).toBe(0);
    const status = JSON.parse(json.stdout);
    expect(status.bots).toMatchObject([{ name: "greeter", state: "running" }]);
    expect(status.configProblems).toEqual([
      {
        file: path.relative(repoRoot, file).startsWith("..") ? file : path.relative(repoRoot, file),
        line,
        column: 7,
        path: "bots.greeter.retries.atempts",
        message: expect.stringContaining('did you mean "attempts"?'),
      },
    ]);
    expect(status.unsetVariables).toEqual([VARIABLE]);

    const text = await cli("status");
    expect(text.stdout).toMatch(
      new RegExp(
        `The running daemon still uses the config it loaded at \\S+Z; the config on disk has problems:\\n.*bothost\\.yaml:${line}:7 bots\\.greeter\\.retries\\.atempts: `,
      ),
    );
    expect(text.stdout).toContain(
      `Not set in this shell, so not checked (the daemon reads its own environment): ${VARIABLE}`,
    );

    // A module path that leads nowhere: the file loads, but a reload would refuse it.
    const moved = configText().replace(/module: (\S+)/, "module: $1.moved");
    await writeFile(file, moved);
    const missing = JSON.parse((await cli("status", "--json")).stdout).configProblems;
    expect(missing).toEqual([
      expect.objectContaining({
        line: moved.split("\n").findIndex((l) => l.includes(".moved")) + 1,
        path: "bots.greeter.module",
        message: expect.stringContaining("was not found"),
      }),
    ]);

    // A YAML syntax error in the bots: status still answers; reload is refused with the location.
    await writeFile(file, `${broken}  other: [unclosed\n`);
    const syntax = await cli("status", "--json");
    expect(syntax.code, syntax.stderr).toBe(0);
    expect(JSON.parse(syntax.stdout).configProblems[0]).toMatchObject({
      line: expect.any(Number),
      message: expect.stringContaining("YAML syntax error"),
    });
    const reload = await cli("reload");
    expect(reload.code).toBe(2);
    expect(reload.stderr).toMatch(
      /the daemon refused the new config and keeps the old one:\n.*bothost\.yaml:\d+:\d+ /,
    );
    expect(hasStackTrace(reload.stderr)).toBe(false);
    expect((await cli("failed", "list")).stdout).toBe("No dead letters.\n");
    expect((await cli("status", "--json")).code).toBe(0);
  });

  it("replaces a socket left by kill -9, and says clearly when no daemon answers", async () => {
    await writeFile(file, configText());
    const first = startRun();
    await first.waitForLog((l) => l.msg === "daemon started");
    first.kill("SIGKILL");
    await first.exited;
    expect((await stat(socket)).isSocket()).toBe(true);

    const down = await cli("status");
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(
      `no daemon answers: the admin socket ${socket}: connection refused. Is it running with this config? (A daemon on another machine is reached through its http.listen, which this config has no http: for.) [DAEMON_UNREACHABLE]`,
    );
    expect(hasStackTrace(down.stderr)).toBe(false);
    // With http.listen on port 0, the daemon's port is not in the config: no http://…:0 is tried.
    await writeFile(file, `${configText()}http:\n  listen: 127.0.0.1:0\n`);
    const anyPort = await cli("status");
    expect(anyPort.code).toBe(1);
    expect(anyPort.stderr).toContain(
      `no daemon answers: the admin socket ${socket}: connection refused. Is it running with this config? (http.listen has port 0: the daemon's HTTP port is chosen at its start, so only its admin socket is tried.) [DAEMON_UNREACHABLE]`,
    );
    await writeFile(file, configText());

    const second = startRun();
    await second.waitForLog((l) => l.msg === "daemon started");
    const status = await cli("status", "--json");
    expect(JSON.parse(status.stdout).pid).toBe(second.pid);
    second.kill("SIGTERM");
    await second.exited;
    expect(existsSync(socket)).toBe(false);
    expect(await readFile(file, "utf8")).toBe(configText());
  });
});
