/**
 * A container runs `bothost run` as its PID 1. Killed with kill -9 and restarted (same hostname,
 * same state volume), the new PID 1 finds the LOCK its predecessor left: it names pid 1, which is
 * this very process's pid, yet this process wrote none. It is stale, and the daemon starts.
 * The container is a new pid namespace made by `unshare` (as root; skipped otherwise), the daemon
 * the built CLI against a sandbox server over HTTP.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import { assertBuilt, childEnv, cliPath } from "../support/cli.ts";

const BOT = "echo-bot@sandbox.example";
const KEY = "EchoBotKey0123456789abcdefghijkl";
const UNSHARE = ["--pid", "--fork", "--mount-proc", "--kill-child"];
const containers = spawnSync("unshare", [...UNSHARE, "true"]).status === 0;

const cleanups: Array<() => Promise<unknown>> = [];
beforeAll(assertBuilt);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `bothost run` as PID 1 of a new pid namespace; resolves its output once it started or exited. */
function runAsPid1(config: string): Promise<{ child: ChildProcess; out: string; code: number | null }> {
  const child = spawn("unshare", [...UNSHARE, process.execPath, cliPath, "run", "--config", config], {
    env: childEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(async () => child.exitCode === null && child.kill("SIGKILL"));
  let out = "";
  return new Promise((resolve) => {
    const seen = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('"msg":"daemon started"')) resolve({ child, out, code: null });
    };
    child.stdout!.on("data", seen);
    child.stderr!.on("data", seen);
    child.once("close", (code) => resolve({ child, out, code }));
  });
}

/** A sandbox with the bot, and a config whose state is in a temporary directory. */
async function world() {
  const sandbox = await startSandbox({
    org: {
      realm: { name: "Local", host: "sandbox.example" },
      users: [{ email: "owner@sandbox.example", full_name: "Olive Owner", role: "owner" }],
      bots: [{ email: BOT, full_name: "Echo Bot", owner: "owner@sandbox.example", api_key: KEY }],
      channels: [],
    },
    port: 0,
  });
  cleanups.push(() => sandbox.stop());
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-pid1-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, "echo.mjs"), "export default { setup() {} };\n");
  const config = path.join(dir, "bothost.yaml");
  await writeFile(
    config,
    `server:\n  url: ${sandbox.url}\nstate:\n  path: ${path.join(dir, "state")}\nlog:\n  level: info\n  pretty: false\n` +
      `bots:\n  echo:\n    module: ./echo.mjs\n    email: ${BOT}\n    api_key: ${KEY}\n`,
  );
  return { dir, config };
}

it.skipIf(!containers)(
  "a container's PID 1 restarted after kill -9 takes over the LOCK it left",
  async () => {
    const { dir, config } = await world();
    const first = await runAsPid1(config);
    expect(first.code, first.out).toBeNull();
    expect(JSON.parse(await readFile(path.join(dir, "state", "LOCK"), "utf8"))).toMatchObject({ pid: 1 });
    first.child.kill("SIGKILL"); // --kill-child: the daemon gets a SIGKILL too, its LOCK left behind
    await new Promise((gone) => first.child.once("close", gone));

    const second = await runAsPid1(config);
    expect(second.out).not.toContain("in use by this process");
    expect(second.code, second.out).toBeNull();
    expect(JSON.parse(await readFile(path.join(dir, "state", "LOCK"), "utf8"))).toMatchObject({ pid: 1 });
  },
);

it.skipIf(!containers)(
  "a sibling container's live PID 1 keeps the LOCK: a second daemon of that hostname is refused",
  async () => {
    const { dir, config } = await world();
    const first = await runAsPid1(config);
    expect(first.code, first.out).toBeNull();
    const lock = await readFile(path.join(dir, "state", "LOCK"), "utf8");

    const second = await runAsPid1(config);
    expect(second.code, second.out).not.toBeNull();
    expect(second.code).not.toBe(0);
    expect(second.out).toContain("is in use by another process of pid 1");
    // The live daemon's LOCK stays as it wrote it, and it still answers.
    expect(await readFile(path.join(dir, "state", "LOCK"), "utf8")).toBe(lock);
    expect(first.child.exitCode).toBeNull();
  },
);
