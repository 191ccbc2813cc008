/**
 * One bot under `bothost run` (dist/), its state in a monitored redis-server of its own
 * (redis-monitor.ts), against the sandbox in the bench process; a member writes to it in direct
 * messages. What the store-call suites share.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { type DaemonProcess, repoRoot, spawnDaemon, writeDaemonConfig } from "./daemon-process.ts";
import { type MonitoredRedis, startMonitoredRedis } from "./redis-monitor.ts";

const { startSandbox } = (await import(
  pathToFileURL(`${repoRoot}dist/bundle/testing.js`).href
)) as typeof import("../../src/testing.ts");

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

export interface RedisBot {
  redis: MonitoredRedis;
  sandbox: Sandbox;
  daemon: DaemonProcess;
  /** The member's direct message to the bot. */
  dm(content: string): void;
  /** What the bot has said, oldest first. */
  said(): Record<string, unknown>[];
  /** Stops the daemon (SIGTERM), the sandbox and Redis; removes the folder. */
  stop(): Promise<void>;
}

export const MEMBER = "member@sandbox.example";

/** Undefined when redis-server is not on PATH. `module`: from the repository's root. */
export async function startRedisBot(o: { name: string; module: string }): Promise<RedisBot | undefined> {
  const dir = await mkdtemp(path.join(tmpdir(), `bothost-bench-${o.name}-`));
  const redis = await startMonitoredRedis(dir);
  if (!redis) {
    await rm(dir, { recursive: true, force: true });
    return undefined;
  }
  const sandbox = await startSandbox();
  const email = `${o.name}-bot@sandbox.example`;
  let daemon: DaemonProcess | undefined;
  const stop = async () => {
    daemon?.child.kill("SIGTERM");
    await daemon?.exited;
    await sandbox.stop();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    sandbox.control.createUser({ email, full_name: o.name, bot: "generic", owner: MEMBER });
    const file = path.join(dir, "bothost.yaml");
    await writeDaemonConfig(file, {
      url: sandbox.url,
      state: { redis: redis.url, prefix: o.name },
      bots: [
        {
          name: o.name,
          module: path.join(repoRoot, o.module),
          email,
          apiKey: sandbox.control.apiKeyOf(email),
        },
      ],
    });
    daemon = spawnDaemon(file);
    await daemon.waitForLine((l) => l.msg === "daemon started", 30_000);
    await redis.watch();
  } catch (err) {
    await stop();
    throw err;
  }
  const botId = sandbox.control.users().find((u) => u.email === email)!.user_id;
  return {
    redis,
    sandbox,
    daemon,
    dm: (content) => void sandbox.control.sendAs(MEMBER, { type: "direct", to: [email], content }),
    said: () => sandbox.control.messages().filter((m) => m.sender_id === botId),
    stop,
  };
}
