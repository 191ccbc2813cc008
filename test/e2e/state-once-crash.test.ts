/**
 * kill -9 between a handler's `ctx.state.update` and the end of its run, then a restart on the
 * same state: the restart handles the message again (caught up), and the counter goes up once.
 * Run on the file store, and on Redis when one answers (else skipped with one line saying why).
 *
 * The test can fail: the same run writes `runs` at once (`ctx.state.immediate`) just before its
 * staged `count`, and the state is read directly right after the kill, before the restart:
 * `runs` must be there and `count` not. On the file store, another message finishing meanwhile
 * commits the store while the first run is still open, so a write made at once is on disk at the
 * kill. On Redis there is nothing to wait for: every write made at once is a script run on the
 * server before the call returns, so it is in Redis by the time the handler logs "e2e: counted".
 * An update that was not staged would therefore show as `count: 1` at the kill, and as 2 after
 * the restart's run.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { repoRoot, spawnCli } from "../support/cli.ts";
import { type Backend, crashBackends } from "../support/crash-backends.ts";
import { botEmail, orgWithBots, send, startE2eSandbox, useE2eCleanup } from "../support/e2e-daemon.ts";

const COUNTER = path.join(repoRoot, "test/fixtures/e2e/counter.mjs");

useE2eCleanup();

const backends = await crashBackends("state-once-crash");

/** Two configs on one state: the counter bot hanging after its update, and not. */
async function configs(sandbox: Sandbox, backendFor: (dir: string) => Backend) {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-state-once-"));
  const backend = backendFor(dir);
  const env = { E2E_KEY: sandbox.control.apiKeyOf(botEmail(0)) };
  const write = async (name: string, hang: boolean) => {
    const file = path.join(dir, name);
    const yaml = [
      `server:\n  url: ${sandbox.url}`,
      backend.yaml,
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
    backend,
    env,
    hanging: await write("hanging.yaml", true),
    plain: await write("plain.yaml", false),
  };
}

/** `count` and `runs` of the counter bot's `ctx.state`, read from the store itself. */
async function readState(backend: Backend) {
  const store = await backend.open();
  try {
    const kv = store.namespace("counter").namespace("kv");
    return { count: await kv.get("count"), runs: await kv.get("runs") };
  } finally {
    await store.close();
  }
}

const botSaid = (sandbox: Sandbox, pattern: RegExp) =>
  sandbox.control
    .messages()
    .map((m) => String(m.content))
    .filter((c) => pattern.test(c));

describe.each(backends)("on the %s", (_name, backendFor) => {
  it("a handler killed after its update, run again after the restart, counts once", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(1));
    const { backend, env, hanging, plain } = await configs(sandbox, backendFor);

    const first = spawnCli(["run", "--config", hanging], { env });
    await first.waitForLog((l) => l.msg === "daemon started");
    send(sandbox, "count this", "c0", "a");
    await first.waitForLog((l) => l.msg === "e2e: counted" && l.count === 1);
    send(sandbox, "other", "c0", "b");
    await expect.poll(() => botSaid(sandbox, /^other done/), { timeout: 15_000 }).toHaveLength(1);
    first.kill("SIGKILL");
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(await readState(backend)).toEqual({ count: undefined, runs: 1 });

    const second = spawnCli(["run", "--config", plain], { env });
    await second.waitForLog((l) => l.msg === "daemon started");
    await expect
      .poll(() => botSaid(sandbox, /^count \d+ pid/), { timeout: 15_000 })
      .toEqual([`count 1 pid ${second.pid}`]);
    expect(second.logs().some((l) => l.msg === "e2e: counted" && l.replayed === true)).toBe(true);
    second.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });

    expect(await readState(backend)).toEqual({ count: 1, runs: 2 });
  });
});
