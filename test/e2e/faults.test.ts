/**
 * A running daemon under server and network faults: 5xx bursts on the long-poll (JSON 503s and a
 * proxy's HTML 502s), 429 storms (injected, then a real low rate limit that also hits the bot's
 * replies), and connection resets. Every message is handled exactly once.
 *
 * Faults that would hit a reply (POST /messages) are injected only where the client may safely
 * retry: a 429 (the server did nothing). A 5xx or a reset during a send leaves its fate unknown,
 * so the client does not repeat it; those faults are aimed at the long-poll.
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

/** Statuses of the requests to `path` so far (-1: reset connection). Only the bot calls the API;
 * injected faults are answered before authentication, so their entries carry no email. */
const statuses = (path: string) =>
  sandbox!.control.requests.filter((r) => r.path === path).map((r) => r.status);
const count = (path: string, status: number) => statuses(path).filter((s) => s === status).length;
/** Backoff after a fault is random, up to seconds: poll longer than expect.poll's default 1 s. */
const eventually = <T>(fn: () => T) => expect.poll(fn, { timeout: 10_000 });

describe("server and network faults", () => {
  it("handles every message exactly once through 5xx bursts, 429 storms and resets", async () => {
    sandbox = await startE2eSandbox(orgWithBots(1));
    config = await writeConfig(sandbox, { b0: { email: botEmail(0) } });
    const daemon = await startDaemon(config);
    const ids: number[] = [];
    const batch = async (label: string, n: number) => {
      const sent = Array.from({ length: n }, (_, i) => send(sandbox!, `task ${label} ${i}`));
      ids.push(...sent);
      await waitForAnswers(sandbox!, sent);
    };
    await batch("warm-up", 2);

    // A burst of 503s on the long-poll, with messages arriving during it.
    sandbox.control.failNext(3, { status: 503, paths: ["/events"] });
    await batch("during 503s", 3);
    await eventually(() => count("/events", 503)).toBe(3);

    // A proxy's HTML 502 pages.
    sandbox.control.failNext(2, { status: 502, nonJson: true, paths: ["/events"] });
    await eventually(() => count("/events", 502)).toBe(2);
    await batch("after 502 pages", 2);

    // Injected 429s on the next polls, then messages.
    sandbox.control.rateLimitNext(4, 0.1);
    await eventually(() => count("/events", 429)).toBe(4);
    await batch("after injected 429s", 2);

    // A real, low per-user limit on a short window: the headers report only the hourly one, so
    // the client cannot see it coming; polls and replies alike are refused and wait as told.
    sandbox.control.setRateLimit({
      rules: [
        [1, 6],
        [3600, 2000],
      ],
    });
    const before = count("/messages", 429);
    await batch("under a 6/s limit", 8);
    sandbox.control.setRateLimit(false);
    expect(count("/messages", 429)).toBeGreaterThan(before);

    // Connections cut under the long-poll.
    sandbox.control.resetConnections(2);
    await eventually(() => count("/events", -1)).toBe(2);
    await batch("after resets", 2);

    expectExactlyOnce(sandbox, ids);
    const logs = daemon.logs();
    expect(logs.some((l) => l.msg === "event queue request failed; backing off")).toBe(true);
    expect(logs.some((l) => l.msg === "rate limited while polling; waiting as the server asks")).toBe(true);
    // One queue all along: none of these faults is a reason to re-register.
    expect(logs.filter((l) => l.msg === "event queue registered")).toHaveLength(1);
    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expectNoSecrets(daemon, config.secrets);
  });
});
