/**
 * Two `bothost run` instances of one config on one machine, sharing Redis, share one admin socket
 * path. Which instance holds it can change behind an instance's back: two survivors of a killed
 * holder take it over at the same moment (the later one replaces the file the first just made),
 * or the file is removed by hand and another instance takes the path. The commands must still
 * reach a running instance:
 * - an instance whose socket file was replaced does not remove the other's file when it stops;
 * - an instance whose file is gone or replaced takes the path again once nothing answers on it.
 * The file is removed by hand here: the second instance takes the path, and the first, holding a
 * socket nobody reaches any more, is left as the one whose file a simultaneous takeover replaced.
 */
import { rm } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.ts";
import { startInstance, useSharedRedisCluster } from "../support/cluster.ts";
import { noRedisMessage, redisReachable } from "../support/redis.ts";

const reachable = await redisReachable();
if (!reachable) console.warn(`admin socket owner: ${noRedisMessage}`);

const startCluster = useSharedRedisCluster("admin-socket-owner");
const LISTENING = "admin socket listening";

/** The pid of the daemon `bothost status` reaches through the config's admin socket, or its exit code. */
async function statusPid(config: { file: string; env: Record<string, string> }): Promise<number | string> {
  const res = await runCli(["status", "--json", "-c", config.file], { env: config.env });
  // No daemon answering is exit 1 with nothing on stdout (DAEMON_UNREACHABLE on stderr).
  return res.stdout === ""
    ? `exit ${res.code}: ${res.stderr}`
    : (JSON.parse(res.stdout) as { pid: number }).pid;
}

describe.skipIf(!reachable)("the admin socket shared by instances of one config", () => {
  it("once its file was taken from under the first holder, the commands still reach a running instance after the new holder stops", {
    timeout: 60_000,
  }, async () => {
    const { config } = await startCluster({ ttl: "15s" });
    const a = await startInstance(config);
    const path = String((await a.proc.waitForLog((l) => l.msg === LISTENING)).socket);
    const b = await startInstance(config);
    await b.proc.waitForLog(
      (l) => l.msg === "another daemon answers on the admin socket: this one runs without it",
    );
    const pids = [a.proc.pid, b.proc.pid];
    await rm(path);
    // An instance listens on the path again (the second takes it over, or the first makes it anew).
    const holder = async () => {
      const pid = await statusPid(config);
      return typeof pid === "number" && pids.includes(pid) ? pid : undefined;
    };
    await expect.poll(holder, { timeout: 15_000, interval: 500 }).toBeDefined();
    const [stopping, staying] = (await holder()) === a.proc.pid ? [a, b] : [b, a];
    stopping.proc.kill("SIGTERM");
    expect(await stopping.proc.exited).toEqual({ code: 0, signal: null });
    await expect.poll(() => statusPid(config), { timeout: 15_000, interval: 500 }).toBe(staying.proc.pid);
  });
});
