/**
 * kill -9 between a handler's `ctx.state.update` and the end of its run, then a restart on the
 * same state: the restart handles the message again (caught up), and the counter goes up once.
 * Another message finishing meanwhile commits the store while the first run is still open, so a
 * write made at once (not staged with the run) would be on disk at the kill.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { repoRoot, spawnCli } from "../support/cli.ts";
import { botEmail, orgWithBots, send, startE2eSandbox, useE2eCleanup } from "../support/e2e-daemon.ts";

const COUNTER = path.join(repoRoot, "test/fixtures/e2e/counter.mjs");

useE2eCleanup();

/** Two configs on one state directory: the counter bot hanging after its update, and not. */
async function configs(sandbox: Sandbox) {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-state-once-"));
  const stateDir = path.join(dir, "state");
  const env = { E2E_KEY: sandbox.control.apiKeyOf(botEmail(0)) };
  const write = async (name: string, hang: boolean) => {
    const file = path.join(dir, name);
    const yaml = [
      `server:\n  url: ${sandbox.url}`,
      `state:\n  path: ${stateDir}`,
      "log:\n  level: debug\n  pretty: false",
      "shutdown_timeout: 5s",
      "bots:",
      `  counter:\n    module: ${COUNTER}\n    email: ${botEmail(0)}\n    api_key: \${E2E_KEY}`,
      `    settings: { hang: ${hang} }`,
    ];
    await writeFile(file, `${yaml.join("\n")}\n`);
    return file;
  };
  return {
    stateDir,
    env,
    hanging: await write("hanging.yaml", true),
    plain: await write("plain.yaml", false),
  };
}

const botSaid = (sandbox: Sandbox, pattern: RegExp) =>
  sandbox.control
    .messages()
    .map((m) => String(m.content))
    .filter((c) => pattern.test(c));

it("a handler killed after its update, run again after the restart, counts once", async () => {
  const sandbox = await startE2eSandbox(orgWithBots(1));
  const { stateDir, env, hanging, plain } = await configs(sandbox);

  const first = spawnCli(["run", "--config", hanging], { env });
  await first.waitForLog((l) => l.msg === "daemon started");
  send(sandbox, "count this", "c0", "a");
  await first.waitForLog((l) => l.msg === "e2e: counted" && l.count === 1);
  send(sandbox, "other", "c0", "b");
  await expect.poll(() => botSaid(sandbox, /^other done/), { timeout: 15_000 }).toHaveLength(1);
  first.kill("SIGKILL");
  expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });

  const second = spawnCli(["run", "--config", plain], { env });
  await second.waitForLog((l) => l.msg === "daemon started");
  await expect
    .poll(() => botSaid(sandbox, /^count \d+ pid/), { timeout: 15_000 })
    .toEqual([`count 1 pid ${second.pid}`]);
  expect(second.logs().some((l) => l.msg === "e2e: counted" && l.replayed === true)).toBe(true);
  second.kill("SIGTERM");
  expect(await second.exited).toEqual({ code: 0, signal: null });

  const store = await FileStore.open(stateDir, { autoFlushMs: 0 });
  try {
    expect(await store.namespace("counter").namespace("kv").get("count")).toBe(1);
  } finally {
    await store.close();
  }
});
