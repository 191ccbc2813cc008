/**
 * Signals that reach `bothost run` while it boots (loading its config and bot modules, opening
 * the state store): a SIGHUP (`systemctl reload`, or `bothost reload` sending it to the pid of the
 * state directory's lock) must not end the process, it reloads once the daemon runs; a SIGTERM
 * stops it gracefully, exit 0.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { spawnCli } from "../support/cli.ts";
import * as e2e from "../support/e2e-daemon.ts";

e2e.useE2eCleanup();

const HELD = path.join(path.dirname(e2e.REPLIER), "held-load.mjs");
const HUP_AT_BOOT = path.join(path.dirname(e2e.REPLIER), "hup-at-boot.mjs");
const TIMEOUT = { timeout: 60_000 };

/** A daemon whose one bot's module holds its boot until SIGUSR2, `signal` sent meanwhile. */
async function signalledWhileBooting(signal: NodeJS.Signals) {
  const sandbox = await e2e.startE2eSandbox(e2e.orgWithBots(1));
  const config = await e2e.writeConfig(sandbox, { b0: { email: e2e.botEmail(0) } });
  await writeFile(config.file, (await readFile(config.file, "utf8")).replace(e2e.REPLIER, HELD));
  const marker = path.join(config.dir, "loading");
  const env = { ...config.env, E2E_LOADING_MARKER: marker };
  const daemon = spawnCli(["run", "--config", config.file], { env });
  await expect.poll(() => existsSync(marker), { timeout: 30_000 }).toBe(true);
  daemon.kill(signal);
  daemon.kill("SIGUSR2");
  return { sandbox, daemon };
}

it(
  "a SIGHUP while the daemon boots is a reload once it runs, not the end of the process",
  TIMEOUT,
  async () => {
    const { sandbox, daemon } = await signalledWhileBooting("SIGHUP");
    await daemon.waitForLog((l) => l.msg === "daemon started");
    await daemon.waitForLog((l) => l.msg === "config reloaded");
    const id = e2e.send(sandbox, "task after the boot");
    await e2e.waitForAnswers(sandbox, [id]);
    e2e.expectExactlyOnce(sandbox, [id]);
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
  },
);

it("a SIGTERM while the daemon boots stops it once booted: nothing starts, exit 0", TIMEOUT, async () => {
  const { sandbox, daemon } = await signalledWhileBooting("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
  expect(daemon.logs().find((l) => l.msg === "shutting down")).toMatchObject({ signal: "SIGTERM" });
  expect(daemon.logs().some((l) => l.msg === "daemon started")).toBe(false);
  expect(sandbox.control.queues()).toEqual([]);
});

it("a SIGHUP while Node loads the daemon's own modules is a reload once it runs too", TIMEOUT, async () => {
  const sandbox = await e2e.startE2eSandbox(e2e.orgWithBots(1));
  const config = await e2e.writeConfig(sandbox, { b0: { email: e2e.botEmail(0) } });
  const env = { ...config.env, NODE_OPTIONS: `--import=${pathToFileURL(HUP_AT_BOOT).href}` };
  const daemon = spawnCli(["run", "--config", config.file], { env });
  await daemon.waitForLog((l) => l.msg === "config reloaded");
  daemon.kill("SIGTERM");
  expect(await daemon.exited).toEqual({ code: 0, signal: null });
});
