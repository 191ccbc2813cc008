/**
 * A reload on an instance that shares its bots through Redis: a changed bot whose lease another
 * instance holds stays on standby there (its new version starts only when its lease is won), so
 * it never runs on two instances at once.
 */
import { afterEach, expect, it } from "vitest";
import { formatReport } from "../../src/cli/reload.ts";
import type { ReloadReport } from "../../src/daemon/reload-plan.ts";
import {
  clusterOrg,
  hasRedisServer,
  startInstance,
  startOwnRedis,
  taggedModule,
  writeClusterConfig,
} from "../support/cluster.ts";
import { botEmail, startE2eSandbox, useE2eCleanup } from "../support/e2e-daemon.ts";

useE2eCleanup();
let redis: { stop(): Promise<void> } | undefined;
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await redis?.stop();
  await cleanup?.();
  redis = cleanup = undefined;
});

const readyz = async (url: string) =>
  ((await (await fetch(`${url}/readyz`)).json()) as { bots: { bot: string; state: string }[] }).bots;

it.skipIf(!hasRedisServer())(
  "keeps a changed bot on standby on the instance that does not hold its lease",
  async () => {
    const own = await startOwnRedis();
    redis = own;
    const sandbox = await startE2eSandbox(clusterOrg());
    const config = await writeClusterConfig(sandbox, {
      redis: own.url,
      prefix: "reload-cluster",
      ttl: "3s",
    });
    cleanup = config.cleanup;
    const rewrite = await taggedModule(config, "v1");

    const holder = await startInstance(config);
    expect(holder.started).toBe(1);
    const spare = await startInstance(config);
    expect(spare.standby).toEqual(["b0"]);
    expect(await readyz(spare.url)).toEqual([expect.objectContaining({ bot: "b0", state: "standby" })]);

    await rewrite("v2");
    // Asked as `bothost reload` asks it: the answer must not claim the bot restarted.
    const res = await fetch(`${spare.url}/admin/reload`, { method: "POST" });
    expect(res.status).toBe(200);
    const report = (await res.json()) as ReloadReport;
    expect(report).toMatchObject({ restart: ["b0"], notHere: ["b0"], failed: [] });
    expect(formatReport(report)).not.toContain("Restarted");
    // Named with the instance that runs it, which the operator reloads too.
    const id = String(
      (await holder.proc.waitForLog((l) => String(l.msg).startsWith("cluster mode"))).instance,
    );
    expect(report.runsOn).toEqual({ b0: id });
    expect(formatReport(report)).toContain(
      `Loaded, not running on this instance (the instance running it keeps its version until reloaded too: SIGHUP that process, or bothost reload where its admin socket is): b0 (on instance ${id})`,
    );
    const reloaded = await spare.proc.waitForLog((l) => l.msg === "config reloaded");
    expect(reloaded).toMatchObject({ restarted: ["b0"], failed: [] });
    expect(await readyz(spare.url)).toEqual([expect.objectContaining({ bot: "b0", state: "standby" })]);
    // One event queue for the bot: the holder's.
    expect(sandbox.control.queues().filter((q) => q.email === botEmail(0))).toHaveLength(1);
  },
  // Redis, a sandbox and two daemons started cold, then a reload: past 20 s on a busy machine.
  45_000,
);
