/**
 * The state store the config asks for, and who decides which bots this instance runs: the
 * embedded store with every bot (`state.path`), or Redis with bots shared by leases (`state.redis`).
 */
import type { Logger } from "pino";
import { adminSocketPath } from "../config/admin-socket-path.ts";
import type { Config } from "../config/schema.ts";
import { stateDefaults } from "../config/state-schema.ts";
import { answers } from "../http/admin-socket.ts";
import { FileStore } from "../state/file-store.ts";
import type { ReplicationSink } from "../state/redis-replication.ts";
import type { StateBackend } from "../state/state-store.ts";
import type { Coordinator } from "./coordinator.ts";

export interface OpenedState {
  store: StateBackend;
  /** Set in cluster mode; the daemon's default (every bot, no leases) otherwise. */
  coordinator: Coordinator | undefined;
  /** With Redis: report each connection's failovers and replica waits (`state`, `leases`). */
  reportRedis?: (sinkFor: (connection: string) => ReplicationSink) => void;
}

/** Open the configured store. `statePath` (the demo's temporary directory) forces the embedded one. */
export async function openState(config: Config, log: Logger, statePath?: string): Promise<OpenedState> {
  const state = config.state;
  if (state.redis === undefined || statePath !== undefined) {
    const dir = statePath ?? state.path ?? stateDefaults.path;
    return {
      store: await FileStore.open(dir, {
        log: log.child({ component: "state" }),
        // A LOCK of this pid left by no earlier process of it: a daemon answering on the
        // directory's admin socket holds it (a sibling container of this hostname, its PID 1 too).
        heldElsewhere: () => answers(adminSocketPath({ path: dir })),
      }),
      coordinator: undefined,
    };
  }
  // Loaded only here: an instance with its state on disk never needs the Redis client's code.
  const [{ RedisStore }, { LeaseCoordinator }] = await Promise.all([
    import("../state/redis-store.ts"),
    import("./lease-coordinator.ts"),
  ]);
  const store = await RedisStore.open({ url: state.redis, prefix: state.prefix, log });
  const coordinator = new LeaseCoordinator({
    store,
    bots: Object.keys(config.bots),
    ttlMs: config.leases?.ttl ?? stateDefaults.leaseTtlMs,
    handoverDeadlineMs: config.shutdown_timeout,
    log: log.child({ component: "cluster" }),
  });
  const reportRedis = (sinkFor: (connection: string) => ReplicationSink) => {
    store.replication.report(sinkFor("state"));
    coordinator.reportRedis(sinkFor("leases"));
  };
  return { store, coordinator, reportRedis };
}
