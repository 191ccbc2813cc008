/**
 * A bot's `setup` is bounded by its `handler_timeout`: one that never finishes fails that bot at
 * start (the others run), refuses a reload with one line while every bot keeps running (and the
 * next reload still applies), and does not hold a stop. A reload refused through the admin route
 * is logged by the daemon as SIGHUP's is. The daemon runs on a held clock: a setup's (and a
 * handler's) time limit passes only where the test moves the clock, never because the machine was
 * slow; a reload's offline trial of an added bot is bounded on the daemon's clock too.
 */
import { readFile, writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { type Booted, bootDaemon } from "../../src/daemon/boot.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { TestClock } from "../../src/testing/test-clock.ts";
import { botEmail, orgWithBots, startE2eSandbox, useE2eCleanup, writeConfig } from "../support/e2e-daemon.ts";
import { answers, moduleText, send, useModuleFiles } from "./module-files.ts";

useE2eCleanup();
let booted: Booted | undefined;
afterEach(async () => {
  await booted?.stop();
  booted = undefined;
});

/** Set by a setup that hangs, once it has begun (the modules run in this process). */
const entered = globalThis as { hangingSetupEntered?: boolean };
afterEach(() => {
  entered.hangingSetupEntered = undefined;
});

/** Once a setup that never finishes has begun and its bound is pending, move the clock past it. */
async function passSetupBound(clock: TestClock, ms: number): Promise<void> {
  await expect.poll(() => entered.hangingSetupEntered, { timeout: 15_000 }).toBe(true);
  await expect.poll(() => clock.pendingDelays(), { timeout: 15_000 }).toContain(ms);
  await clock.advance(ms);
}

/** A bot module whose setup never finishes. */
const HANGING = `export default { events: ["message"], async setup() {
  globalThis.hangingSetupEntered = true;
  await new Promise(() => {});
} };\n`;

const NAMES = ["a", "b", "c"] as const;

/** Three bots with their own module files, `c`'s setup bounded by `timeout`, and an HTTP listener. */
async function boot(sandbox: Sandbox, modules: Record<(typeof NAMES)[number], string>, timeout: string) {
  const config = await writeConfig(
    sandbox,
    Object.fromEntries(
      NAMES.map((name, i) => [
        name,
        { email: botEmail(i), ...(name === "c" ? { extra: `handler_timeout: ${timeout}` } : {}) },
      ]),
    ),
    { global: "http:\n  listen: 127.0.0.1:0\n  admin_token: t0ken-for-the-admin-routes" },
  );
  const file = await useModuleFiles(config, modules);
  Object.assign(process.env, config.env);
  const lines: { level: number; msg: string; problems?: string }[] = [];
  const clock = new TestClock({ held: true });
  booted = await bootDaemon(config.file, {
    clock,
    logLevel: "info",
    logDestination: { write: (line: string) => lines.push(JSON.parse(line)) },
  });
  return {
    daemon: booted.daemon,
    lines,
    clock,
    configFile: config.file,
    file,
  };
}

const TIMED_OUT =
  /^bots\.c \(\.\/c\.mjs\): setup did not finish within 300 ms \(handler_timeout\) \[SETUP_TIMEOUT\]$/;

describe("a setup that never finishes", () => {
  it("fails its bot at start, naming the timeout; the other bots run", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(3));
    const d = await boot(sandbox, { a: moduleText("v1"), b: moduleText("v1"), c: HANGING }, "300ms");
    const starting = d.daemon.start();
    await passSetupBound(d.clock, 300);
    const report = await starting;
    expect(report.started.sort()).toEqual(["a", "b"]);
    expect(report.failed.map((f) => [f.name, (f.error as { code?: string }).code])).toEqual([
      ["c", "SETUP_TIMEOUT"],
    ]);
    const status = await d.daemon.status();
    expect(status.bots.find((b) => b.name === "c")).toMatchObject({
      state: "failed",
      reason: "it failed to start: setup did not finish within 300 ms (handler_timeout)",
    });
    const id = send(sandbox, "c0");
    await expect.poll(() => answers(sandbox, id), { timeout: 15_000 }).toEqual([`v1 handled ${id}`]);
  });

  it("refuses a reload in one line, every bot keeps running, and the next reload applies", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(3));
    const d = await boot(sandbox, { a: moduleText("v1"), b: moduleText("v1"), c: moduleText("v1") }, "300ms");
    expect((await d.daemon.start()).started).toHaveLength(3);
    const queue = sandbox.control.queues().find((q) => q.email === botEmail(2))?.queue_id;
    expect(queue).toBeDefined();

    await writeFile(d.file("c"), HANGING);
    const reloading = d.daemon.reload().then(
      () => undefined,
      (err: unknown) => err as { code: string; message: string },
    );
    await passSetupBound(d.clock, 300);
    const refused = await reloading;
    expect(refused?.code).toBe("RELOAD_REFUSED");
    expect(refused?.message.split("\n")).toEqual([expect.stringMatching(TIMED_OUT)]);
    expect(sandbox.control.queues().find((q) => q.email === botEmail(2))?.queue_id).toBe(queue);
    expect((await d.daemon.status()).bots.map((b) => [b.name, b.state])).toEqual(
      NAMES.map((n) => [n, "running"]),
    );
    const old = send(sandbox, "c2");
    await expect.poll(() => answers(sandbox, old), { timeout: 15_000 }).toEqual([`v1 handled ${old}`]);

    // The refused reload holds nothing: the fixed module is applied by the next one.
    await writeFile(d.file("c"), moduleText("v2"));
    expect(await d.daemon.reload()).toMatchObject({ restart: ["c"], failed: [] });
    const id = send(sandbox, "c2");
    await expect.poll(() => answers(sandbox, id), { timeout: 15_000 }).toEqual([`v2 handled ${id}`]);
  });

  it("does not hold a stop: the start gives up, its bound cleared", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(3));
    const d = await boot(sandbox, { a: moduleText("v1"), b: moduleText("v1"), c: HANGING }, "1h");
    const starting = d.daemon.start();
    await expect.poll(() => entered.hangingSetupEntered, { timeout: 15_000 }).toBe(true);
    await booted!.stop();
    booted = undefined;
    const report = await starting;
    expect(report.started).not.toContain("c");
    expect(report.failed).toEqual([]);
    // The setup's bound is cleared by the stop: no timer is left to keep the process running.
    expect(d.clock.pendingDelays()).toEqual([]);
  });
});

describe("a reload with a setup that never finishes", () => {
  it("is refused for an added bot (set up offline) too, naming the timeout", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(4));
    const d = await boot(sandbox, { a: moduleText("v1"), b: moduleText("v1"), c: moduleText("v1") }, "300ms");
    expect((await d.daemon.start()).started).toHaveLength(3);
    await writeFile(d.file("d"), HANGING);
    const key = sandbox.control.apiKeyOf(botEmail(3));
    const text = await readFile(d.configFile, "utf8");
    await writeFile(
      d.configFile,
      `${text}  d:\n    module: ./d.mjs\n    email: ${botEmail(3)}\n    api_key: ${key}\n    handler_timeout: 300ms\n`,
    );
    const reloading = d.daemon.reload().then(
      () => undefined,
      (err: unknown) => err as { code: string; message: string },
    );
    await passSetupBound(d.clock, 300);
    const refused = await reloading;
    expect(refused?.code).toBe("RELOAD_REFUSED");
    expect(refused?.message).toMatch(
      /^bots\.d \(\.\/d\.mjs\): setup did not finish within 300 ms \(handler_timeout\) \[SETUP_TIMEOUT\]$/,
    );
    expect((await d.daemon.status()).bots.map((b) => [b.name, b.state])).toEqual(
      NAMES.map((n) => [n, "running"]),
    );
  });

  it("is given up when the daemon stops meanwhile, refused", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(3));
    const d = await boot(sandbox, { a: moduleText("v1"), b: moduleText("v1"), c: moduleText("v1") }, "1h");
    expect((await d.daemon.start()).started).toHaveLength(3);
    await writeFile(d.file("c"), HANGING);
    const reloading = d.daemon.reload().then(
      () => undefined,
      (err: unknown) => err as { code: string; message: string },
    );
    await expect.poll(() => entered.hangingSetupEntered, { timeout: 15_000 }).toBe(true);
    await booted!.stop();
    booted = undefined;
    expect(await reloading).toMatchObject({ code: "RELOAD_REFUSED" });
  });
});

describe("a reload refused through the HTTP admin route", () => {
  it("is logged by the daemon with its reason, as SIGHUP's is", async () => {
    const sandbox = await startE2eSandbox(orgWithBots(3));
    const d = await boot(sandbox, { a: moduleText("v1"), b: moduleText("v1"), c: moduleText("v1") }, "300ms");
    await d.daemon.start();
    await writeFile(
      d.file("c"),
      moduleText("v2").replace("setup(bot) {", 'setup(bot) { bot.cron("*/5 * * *", {}, () => {});'),
    );
    const res = await fetch(`${d.daemon.http!.url}/admin/reload`, {
      method: "POST",
      headers: { authorization: "Bearer t0ken-for-the-admin-routes" },
    });
    expect(res.status).toBe(400);
    const refusals = d.lines.filter((l) =>
      l.msg.startsWith("reload refused; the daemon keeps running the old config: "),
    );
    expect(refusals).toHaveLength(1);
    expect(refusals[0]!.problems).toMatch(/^bots\.c \(\.\/c\.mjs\): .*\[BOT_SETUP_INVALID\]$/);
  });
});
