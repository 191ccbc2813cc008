/**
 * The state store opened by an admin command itself, when no daemon answers (`bothost failed`,
 * `bothost dialogs`): Redis when the config names it, else the state directory. Loaded only then:
 * the store's code (and the Redis client's) is not needed while a daemon answers.
 */
import type { Config } from "../config/schema.ts";
import type { StoreLog } from "../state/file-store.ts";
import type { StateBackend } from "../state/state-store.ts";

/**
 * `command` (`bothost dialogs`) is said in the state directory's lock while it holds it. Meeting
 * another command's lock, it waits for it, saying so on stderr: the operator sees why it pauses.
 */
export async function openOfflineStore(config: Config, command: string): Promise<StateBackend> {
  if (config.state.redis !== undefined) {
    const { RedisStore } = await import("../state/redis-store.ts");
    return RedisStore.open({ url: config.state.redis, prefix: config.state.prefix });
  }
  const [{ stateDefaults }, { FileStore }, { COMMAND_WAIT_LINE }] = await Promise.all([
    import("../config/state-schema.ts"),
    import("../state/file-store.ts"),
    import("../state/_files.ts"),
  ]);
  const log = toStderr(command, COMMAND_WAIT_LINE);
  return FileStore.open(config.state.path ?? stateDefaults.path, { command, log });
}

/**
 * The store's wait for another command's lock (its line `waitLine`), said by `command` on stderr;
 * its other lines are a daemon's concern.
 */
function toStderr(command: string, waitLine: string): StoreLog {
  return {
    warn: () => {},
    info: (o, msg) => {
      if (msg !== waitLine) return;
      const { command: holder, pid, waitMs } = o as { command: string; pid: number; waitMs: number };
      process.stderr.write(
        `${command}: waiting for ${holder} (pid ${pid}), which holds the state directory, up to ${waitMs / 1000} s\n`,
      );
    },
  };
}
