/**
 * Graceful shutdown of `bothost run`: on SIGTERM or SIGINT it stops polling, lets running
 * handlers finish (their replies go out), deletes every event queue, flushes the state and
 * exits 0, a handler deaf to its signal past shutdown_timeout or not; a restart on the same state
 * then replays exactly what was sent while it was down (and the message that handler had).
 */
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import {
  botEmail,
  type E2eConfig,
  expectExactlyOnce,
  expectNoSecrets,
  orgWithBots,
  replies,
  send,
  startDaemon,
  startE2eSandbox,
  useE2eCleanup,
  waitForAnswers,
  writeConfig,
} from "../support/e2e-daemon.ts";

let sandbox: Sandbox | undefined;
let config: E2eConfig | undefined;

useE2eCleanup();

/**
 * Queue deletions since request `from` (taken once the daemon started: each start's server check
 * deletes the queue it registered to read the server's identity).
 */
const deletes = (from: number) =>
  sandbox!.control.requests.slice(from).filter((r) => r.method === "DELETE" && r.path === "/events");

/**
 * Each case starts a daemon process twice (the restart on the same state): on a loaded 2-core
 * machine that takes 20 s and more, past vitest's default 20 s.
 */
describe("graceful shutdown", { timeout: 60_000 }, () => {
  it("SIGTERM: running handlers finish, queues are deleted, state is flushed, exit 0", async () => {
    sandbox = await startE2eSandbox(orgWithBots(1));
    config = await writeConfig(sandbox, { b0: { email: botEmail(0), extra: "settings:\n  delay_ms: 400" } });
    const daemon = await startDaemon(config);
    const started = sandbox.control.requests.length;
    // Three conversations, so three handlers are busy at once when the signal lands.
    const busy = ["x", "y", "z"].map((topic) => send(sandbox!, `task slow ${topic}`, "c0", topic));
    await expect
      .poll(() => daemon.logs().filter((l) => l.msg === "e2e: handling").length, { timeout: 15_000 })
      .toBe(3);
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });

    expectExactlyOnce(sandbox, busy);
    expect(sandbox.control.queues()).toEqual([]);
    expect(deletes(started)).toEqual([
      { method: "DELETE", path: "/events", status: 200, email: botEmail(0) },
    ]);
    const logs = daemon.logs();
    expect(logs.find((l) => l.msg === "shutting down")).toMatchObject({ signal: "SIGTERM" });
    expect(logs.find((l) => l.msg === "daemon stopped")).toMatchObject({ abandoned: 0 });
    expect(logs.findIndex((l) => l.msg === "e2e: handling")).toBeLessThan(
      logs.findIndex((l) => l.msg === "shutting down"),
    );

    // The state was flushed: a restart replays only what was sent while the daemon was down.
    const whileDown = send(sandbox, "task while down");
    const again = await startDaemon(config);
    await waitForAnswers(sandbox, [whileDown]);
    again.kill("SIGTERM");
    expect(await again.exited).toEqual({ code: 0, signal: null });
    expectExactlyOnce(sandbox, [...busy, whileDown]);
    expect(again.logs().find((l) => l.msg === "caught up after a new queue")).toMatchObject({
      reason: "start",
      replayed: 1,
    });
    expectNoSecrets(daemon, config.secrets);
    expectNoSecrets(again, config.secrets);
  });

  it("a second signal exits at once with code 1; the cut message is handled after the restart", async () => {
    sandbox = await startE2eSandbox(orgWithBots(1));
    config = await writeConfig(sandbox, { b0: { email: botEmail(0), extra: "settings:\n  delay_ms: 800" } });
    const daemon = await startDaemon(config);
    const busy = send(sandbox, "task slow");
    await daemon.waitForLog((l) => l.msg === "e2e: handling" && l.messageId === busy);
    daemon.kill("SIGTERM");
    await daemon.waitForLog((l) => l.msg === "shutting down");
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 1, signal: null });
    expect(daemon.logs().find((l) => l.msg === "second signal: exiting without waiting")).toBeDefined();
    expect(replies(sandbox)).toEqual([]);
    // Its completion was never recorded, so the restart runs it (the at-least-once case).
    const again = await startDaemon(config);
    await waitForAnswers(sandbox, [busy]);
    again.kill("SIGKILL");
    expectExactlyOnce(sandbox, [busy]);
    expectNoSecrets(daemon, config.secrets);
    expectNoSecrets(again, config.secrets);
  });

  it("SIGINT (Ctrl-C) does the same for every bot", async () => {
    sandbox = await startE2eSandbox(orgWithBots(2));
    config = await writeConfig(sandbox, {
      b0: { email: botEmail(0), extra: "settings:\n  delay_ms: 300" },
      b1: { email: botEmail(1) },
    });
    const daemon = await startDaemon(config);
    const started = sandbox.control.requests.length;
    expect(sandbox.control.queues()).toHaveLength(2);
    const busy = send(sandbox, "task slow", "c0");
    await daemon.waitForLog((l) => l.msg === "e2e: handling" && l.messageId === busy);
    daemon.kill("SIGINT");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expectExactlyOnce(sandbox, [busy]);
    expect(sandbox.control.queues()).toEqual([]);
    expect(
      deletes(started)
        .map((r) => [r.email, r.status])
        .sort(),
    ).toEqual([
      [botEmail(0), 200],
      [botEmail(1), 200],
    ]);
    expect(daemon.logs().find((l) => l.msg === "shutting down")).toMatchObject({ signal: "SIGINT" });
    expectNoSecrets(daemon, config.secrets);
  });

  it("a handler deaf to its signal past shutdown_timeout: the daemon stops and exits 0 all the same", async () => {
    sandbox = await startE2eSandbox(orgWithBots(1));
    // Ten minutes, its signal ignored: far past the config's shutdown_timeout (2 s, the wait here).
    config = await writeConfig(
      sandbox,
      { b0: { email: botEmail(0), extra: "settings:\n  delay_ms: 600000" } },
      { shutdownTimeout: "2s" },
    );
    const daemon = await startDaemon(config);
    const busy = send(sandbox, "task deaf");
    await daemon.waitForLog((l) => l.msg === "e2e: handling" && l.messageId === busy);
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    const logs = daemon.logs();
    expect(
      logs.find((l) => l.msg === "shutdown deadline passed; handlers still running were aborted"),
    ).toMatchObject({
      abandoned: 1,
    });
    // The queue goes at the stop's start, not once the handlers are done (running.md's steps).
    expect(logs.findIndex((l) => l.msg === "event queue deleted")).toBeLessThan(
      logs.findIndex((l) => l.msg === "shutdown deadline passed; handlers still running were aborted"),
    );
    expect(logs.filter((l) => (l.level as number) >= 50)).toEqual([]);
    // Never marked handled: the next start takes it again.
    const again = await startDaemon(config);
    await again.waitForLog((l) => l.msg === "e2e: handling" && l.messageId === busy);
    again.kill("SIGKILL");
    expect(replies(sandbox)).toEqual([]);
    expectNoSecrets(daemon, config.secrets);
  });
});
