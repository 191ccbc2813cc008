/**
 * The Redis line of `bothost status` and of the `/status` page: the primary reached, whether
 * through Sentinel, the failovers seen and whether writes wait for a replica; none without Redis.
 */
import { describe, expect, it } from "vitest";
import { formatStatus } from "../../src/cli/status.ts";
import type { DaemonStatus } from "../../src/http/daemon-status.ts";
import { renderStatusPage } from "../../src/http/status-page.ts";

const base: DaemonStatus = {
  version: "0.1.0",
  pid: 42,
  startedAt: "2026-11-29T04:00:00.000Z",
  uptimeSeconds: 60,
  configLoadedAt: "2026-11-29T04:00:00.000Z",
  bots: [],
  recentFailures: [],
};

describe("the Redis line of the status", () => {
  it("names the primary and the Sentinel group, in the text and on the page", () => {
    const status: DaemonStatus = {
      ...base,
      redis: {
        primary: "10.0.0.7:6379",
        sentinel: { name: "mymaster", sentinels: ["10.0.0.1:26379", "10.0.0.2:26379", "10.0.0.3:26379"] },
        failovers: 1,
        replicaConfirmed: true,
      },
    };
    const line =
      'Redis primary 10.0.0.7:6379, through Sentinel (master "mymaster", 3 Sentinels); 1 failover seen; writes confirmed on the replicas';
    expect(formatStatus(status).split("\n")[1]).toBe(line);
    expect(renderStatusPage(status)).toContain(line.replaceAll('"', "&#34;"));
  });

  it("says a URL is reached directly, and prints nothing without Redis", () => {
    const direct = formatStatus({
      ...base,
      redis: { primary: "127.0.0.1:6379", failovers: 0, replicaConfirmed: false },
    });
    expect(direct).toContain(
      "Redis primary 127.0.0.1:6379, direct (no Sentinel); 0 failovers seen; writes not waiting for replicas",
    );
    expect(formatStatus(base)).not.toContain("Redis");
    expect(renderStatusPage(base)).not.toContain("Redis primary");
  });
});

describe("the Redis line while the connection is down", () => {
  it("says the primary named is the last reached, and that it reconnects", () => {
    const line = formatStatus({
      ...base,
      redis: {
        primary: "10.0.0.7:6379",
        sentinel: { name: "mymaster", sentinels: ["10.0.0.1:26379"] },
        failovers: 0,
        replicaConfirmed: true,
        disconnected: true,
      },
    }).split("\n")[1];
    expect(line).toBe(
      'Redis primary 10.0.0.7:6379 (the last reached: not connected now, reconnecting), through Sentinel (master "mymaster", 1 Sentinel); 0 failovers seen; writes confirmed on the replicas',
    );
  });
});
