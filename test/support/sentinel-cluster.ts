/**
 * A cluster on Redis through Sentinel: a primary, two replicas and three Sentinels of the test's
 * own (sentinel.ts), a sandbox and a cluster config naming them, each closed after the test.
 */
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type ClusterConfig, openCluster, useClusterCleanup, type writeClusterConfig } from "./cluster.ts";
import { MASTER_NAME, type SentinelTopology, startSentinelTopology } from "./sentinel.ts";

type ClusterOptions = Omit<Parameters<typeof writeClusterConfig>[1], "redis">;

export interface SentinelCluster {
  redis: SentinelTopology;
  sandbox: Sandbox;
  config: ClusterConfig;
  /** Close `close` after the test, before what was opened earlier. */
  opened(close: () => Promise<unknown>): void;
}

export function useSentinelCluster(): (options: ClusterOptions) => Promise<SentinelCluster> {
  const opened = useClusterCleanup();
  return async (options) => {
    const redis = await startSentinelTopology();
    opened(() => redis.stop());
    const cluster = await openCluster(opened, {
      ...options,
      redis: { sentinels: redis.sentinels, name: MASTER_NAME },
    });
    return { redis, ...cluster, opened };
  };
}
