/**
 * The `/status` page's title counts the bots in trouble: failed, retrying, and (cluster mode)
 * stopped because this instance lost its lease, as `bothost status` exits 1 for it; a bot
 * stopped otherwise, or a standby, is not counted.
 */
import { describe, expect, it } from "vitest";
import type { BotStatus, DaemonStatus } from "../../src/http/daemon-status.ts";
import { renderStatusPage } from "../../src/http/status-page.ts";

const bot = (name: string, extra: Partial<BotStatus>): BotStatus => ({
  name,
  state: "running",
  queueId: null,
  handled: 0,
  failed: 0,
  deadLetters: 0,
  nextRuns: [],
  dialogs: { waiting: 0, list: [] },
  ...extra,
});

const page = (bots: BotStatus[]): string => {
  const status: DaemonStatus = {
    version: "0.1.0",
    pid: 42,
    startedAt: "2026-11-29T04:00:00.000Z",
    uptimeSeconds: 60,
    configLoadedAt: "2026-11-29T04:00:00.000Z",
    bots,
    recentFailures: [],
  };
  return renderStatusPage(status);
};

describe("the /status page's title", () => {
  it("counts a bot stopped by a lost lease, not one stopped otherwise nor a standby", () => {
    const lost = bot("b0", { state: "stopped", leaseLost: true, reason: "lease lost: …" });
    expect(page([lost, bot("b1", { state: "stopped" }), bot("b2", { state: "standby" })])).toContain(
      "<title>(1) bothost status</title>",
    );
    expect(page([bot("b1", { state: "stopped" })])).toContain("<title>bothost status</title>");
  });
});
