/**
 * Running the daemon from code: what `bothost run` does, for a program that embeds bothost (a
 * service that also runs bots, a test harness). Signals stay the embedder's to handle.
 */
import type { DaemonStatus } from "../http/daemon-status.ts";
import { bootDaemon } from "./boot.ts";
import type { ReloadReport } from "./reload-plan.ts";

/** What {@link startDaemon} needs: the config file, as `bothost run --config` takes it. */
export interface StartDaemonOptions {
  /** Path of the YAML config; relative paths in it start at its folder. */
  config: string;
  /** Overrides the config's `log.level` (e.g. `"silent"` in tests). */
  logLevel?: "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "silent";
}

/** A daemon started by {@link startDaemon}. */
export interface RunningDaemon {
  /** The bots that started, and those whose start failed (with why). */
  readonly started: readonly string[];
  readonly failed: readonly { name: string; reason: string }[];
  /** The HTTP listener's base URL, when the config has `http.listen`. */
  readonly url: string | undefined;
  /**
   * The admin socket `bothost status`, `reload` and `failed` talk to (the admin routes, no token;
   * mode 0600): in the state directory, or a per-user folder for Redis state. Undefined when
   * another instance sharing the same Redis state on this machine holds it.
   */
  readonly adminSocket: string | undefined;
  /** What `bothost status` shows. */
  status(): Promise<DaemonStatus>;
  /**
   * Read the config file again and apply what changed (as SIGHUP does); rejects, changing nothing,
   * on an invalid config or when a new bot version's setup throws (`RELOAD_REFUSED`).
   */
  reload(): Promise<ReloadReport>;
  /** Stop every bot (handlers finish up to `shutdown_timeout`), delete the queues, flush the state. */
  stop(): Promise<void>;
}

/**
 * Load the config and every bot module, start every bot and resolve once they are running.
 *
 * @throws {ConfigError} the config or a bot's settings are invalid (located at file:line:column).
 * @throws {ModuleError} a bot module cannot be found or loaded.
 * @throws {BothostError} `ADMIN_SOCKET_IN_USE`: another daemon answers on the admin socket (`ADMIN_SOCKET_FAILED`: it cannot be made).
 * @example
 * ```ts
 * import { startDaemon } from "bothost";
 * const daemon = await startDaemon({ config: "bothost.yaml" });
 * process.once("SIGTERM", () => void daemon.stop());
 * ```
 */
export async function startDaemon(options: StartDaemonOptions): Promise<RunningDaemon> {
  const booted = await bootDaemon(options.config, options.logLevel ? { logLevel: options.logLevel } : {});
  const { daemon } = booted;
  const report = await daemon.start().catch(async (err: unknown) => {
    await booted.stop();
    throw err;
  });
  const reasons = await daemon.status();
  return {
    started: report.started,
    failed: [...report.authFailed, ...report.failed.map((f) => f.name)].map((name) => ({
      name,
      reason: reasons.bots.find((b) => b.name === name)?.reason ?? "it failed to start",
    })),
    url: daemon.http?.url,
    adminSocket: daemon.adminSocket?.path,
    status: () => daemon.status(),
    reload: () => daemon.reload(),
    stop: () => booted.stop(),
  };
}
