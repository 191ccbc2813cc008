/**
 * `bothost run` (and `bothost failed`, which opens the store itself when no daemon answers) with
 * `state.redis` through Sentinels none of which answers: after a few rounds of asking them it
 * says so in one line naming the Sentinels and exits 1 (a service manager starts it again),
 * instead of printing nothing and waiting for them forever, a SIGTERM put off meanwhile. No
 * Redis needed: nothing listens at the Sentinels' addresses.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, hasStackTrace, runCli } from "../support/cli.ts";
import { type ClusterConfig, clusterOrg, freePort, writeClusterConfig } from "../support/cluster.ts";
import { startE2eSandbox } from "../support/e2e-daemon.ts";

let sandbox: Sandbox | undefined;
let config: ClusterConfig | undefined;

beforeAll(assertBuilt);
afterAll(async () => {
  await config?.cleanup();
  await sandbox?.stop();
});

describe("Sentinels none of which answers at start", () => {
  it("run and failed say so in one line and exit 1", async () => {
    sandbox = await startE2eSandbox(clusterOrg());
    const sentinels = [];
    for (let i = 0; i < 3; i++) sentinels.push(`127.0.0.1:${await freePort()}`);
    config = await writeClusterConfig(sandbox, {
      redis: { sentinels, name: "nobody" },
      prefix: "unreachable",
      ttl: "3s",
    });
    for (const args of [["run"], ["failed", "list"]]) {
      const result = await runCli([...args, "--config", config.file], { env: config.env });
      expect({ args, code: result.code }).toEqual({ args, code: 1 });
      const lines = result.stderr.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(
        `Cannot connect to Redis at sentinel master "nobody" (db 0) via ${sentinels.join(",")}`,
      );
      expect(lines[0]).toContain("no Sentinel named the primary (none answered, or none monitors that name)");
      expect(lines[0]).not.toContain("retry is disabled");
      expect(hasStackTrace(result.stderr)).toBe(false);
    }
  }, 120_000);
});
