/**
 * The one-minute soak (bench/soak): `bothost run` as a subprocess (from dist/, so `npm test`
 * builds first) runs three echo bots and the announcements bot against a sandbox while faults
 * are injected (queue expiry, 5xx bursts, a 502 HTML page, 429s, a hung poll, a register failure,
 * a server restart, connection resets) and the daemon is killed with SIGKILL and restarted.
 * `npm run soak -- --minutes N` runs the same thing for longer and prints the report.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runSoak } from "../../bench/soak/run-soak.ts";
import { formatSoakReport } from "../../bench/soak/soak-report.ts";

const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

describe("soak", () => {
  it.skipIf(!existsSync(cli))(
    "one minute under faults and a kill -9: every message answered exactly once, no announcement twice, memory bounded",
    async () => {
      const lines: string[] = [];
      const report = await runSoak({ minutes: 1, say: (line) => lines.push(line) });
      const summary = formatSoakReport(report);
      process.stdout.write(`${summary}\n`);
      expect(report.restarts).toBe(1);
      expect(report.faults.map((f) => f.name)).toContain("kill-9");
      expect(report.replies.sent).toBeGreaterThan(50);
      expect({ lost: report.replies.lost, duplicated: report.replies.duplicated }).toEqual({
        lost: [],
        duplicated: [],
      });
      expect(report.replies.misrouted).toBe(0);
      expect(report.replies.exactlyOnce).toBe(report.replies.sent);
      expect(report.announcements?.duplicatedMinutes).toEqual([]);
      expect(report.announcements?.missingMinutes).toEqual([]);
      expect(report.exitCode).toBe(0);
      // The faults really happened, and the runtime recovered from each the way it should.
      expect(report.serverSaw.resets).toBeGreaterThanOrEqual(1);
      expect(report.serverSaw.hungPolls).toBe(1);
      expect(report.serverSaw.status5xx).toBeGreaterThanOrEqual(6);
      expect(report.serverSaw.status429).toBeGreaterThanOrEqual(1);
      expect(report.registrations.watchdog).toBe(1);
      expect(report.registrations.queue_expired).toBeGreaterThanOrEqual(2);
      // Loose: a leak of a few MB a second would still be caught; warm-up growth would not fail it.
      expect(report.memory.peakMb).toBeLessThan(400);
      expect(report.memory.lastQuarterMb).toBeLessThan(report.memory.firstQuarterMb * 1.5 + 50);
    },
    240_000,
  );
});
