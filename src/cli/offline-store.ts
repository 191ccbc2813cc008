/**
 * The state store opened by an admin command itself, when no daemon answers (`bothost failed`,
 * `bothost dialogs`): Redis when the config names it, else the state directory. Loaded only then:
 * the store's code (and the Redis client's) is not needed while a daemon answers.
 */
import type { Config } from "../config/schema.ts";
import type { StateBackend } from "../state/state-store.ts";

/** `command` (`bothost dialogs`) is said in the state directory's lock while it holds it. */
export async function openOfflineStore(config: Config, command: string): Promise<StateBackend> {
  if (config.state.redis !== undefined) {
    const { RedisStore } = await import("../state/redis-store.ts");
    return RedisStore.open({ url: config.state.redis, prefix: config.state.prefix });
  }
  const [{ stateDefaults }, { FileStore }] = await Promise.all([
    import("../config/state-schema.ts"),
    import("../state/file-store.ts"),
  ]);
  return FileStore.open(config.state.path ?? stateDefaults.path, { command });
}
