/**
 * A long-poll the server accepts and never answers (a stuck proxy, a half-open connection): the
 * daemon's watchdog gives up after the server's event_queue_longpoll_timeout_seconds plus the
 * config's longpoll_margin (3 s + 1 s here), registers a new queue and replays what it missed.
 */
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import {
  botEmail,
  type E2eConfig,
  expectExactlyOnce,
  expectNoSecrets,
  orgWithBots,
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

describe("a hung long-poll", () => {
  it("is abandoned by the watchdog; messages sent meanwhile are replayed, each handled once", async () => {
    sandbox = await startE2eSandbox(orgWithBots(1));
    config = await writeConfig(sandbox, { b0: { email: botEmail(0) } });
    const daemon = await startDaemon(config);
    const registered = daemon.logs().find((l) => l.msg === "event queue registered");
    const firstQueue = String(registered?.queueId);
    const before = send(sandbox, "task before");
    await waitForAnswers(sandbox, [before]);

    sandbox.control.hangNextPoll();
    await sandbox.control.waitFor(() => sandbox!.control.requests.some((r) => r.status === 0), {
      timeoutMs: 5_000,
    });
    const during = [send(sandbox, "task during 1"), send(sandbox, "task during 2")];
    const watchdog = await daemon.waitForLog(
      (l) => l.msg === "no heartbeat within the long-poll timeout; re-registering",
    );
    // The HTTP timeout of a poll is the server's long-poll timeout plus the margin.
    expect(watchdog).toMatchObject({ waitedMs: 4_000, queueId: firstQueue });
    await waitForAnswers(sandbox, during);
    const after = send(sandbox, "task after");
    await waitForAnswers(sandbox, [after]);

    expectExactlyOnce(sandbox, [before, ...during, after]);
    expect(
      daemon
        .logs()
        .filter((l) => l.msg === "event queue registered")
        .map((l) => l.reason),
    ).toEqual(["start", "watchdog"]);
    expect(daemon.logs().find((l) => l.msg === "caught up after a new queue")).toMatchObject({
      reason: "watchdog",
      replayed: 2,
    });
    // The abandoned queue is deleted rather than left for the server's garbage collector.
    await expect.poll(() => sandbox!.control.queues().map((q) => q.queue_id)).not.toContain(firstQueue);
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expectNoSecrets(daemon, config.secrets);
  });
});
