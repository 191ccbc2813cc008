import { describe, expect, it } from "vitest";
import { AUTH_REJECTED } from "../../src/api/errors.ts";
import { readinessOf } from "../../src/http/readiness.ts";

describe("readinessOf", () => {
  const now = 1_000_000;
  it("is ready when every queue polls and was heard from within one long-poll period", () => {
    expect(
      readinessOf(
        [
          { name: "a", state: "polling", lastContactAt: now - 5_000, longpollMs: 100_000 },
          { name: "hook", state: "webhook" },
        ],
        now,
      ),
    ).toEqual({
      ready: true,
      bots: [
        { bot: "a", state: "polling", ready: true, lastContactAgoMs: 5_000 },
        { bot: "hook", state: "webhook", ready: true },
      ],
    });
  });

  it("names the bot that is not ready and why", () => {
    const r = readinessOf(
      [
        {
          name: "quiet",
          state: "polling",
          lastContactAt: now - 120_000,
          lastHeartbeatAt: now - 130_000,
          longpollMs: 100_000,
        },
        { name: "down", state: "backing_off", lastContactAt: now - 1_000, longpollMs: 100_000 },
        { name: "key", state: "auth_failed" },
        { name: "new", state: "idle" },
      ],
      now,
    );
    expect(r.ready).toBe(false);
    expect(r.bots.map((b) => [b.bot, b.reason])).toEqual([
      ["quiet", "no word from the server for 120 s (more than one long-poll period, 100 s)"],
      ["down", "the event queue failed; retrying with backoff"],
      ["key", AUTH_REJECTED],
      ["new", "not started yet"],
    ]);
  });
});
