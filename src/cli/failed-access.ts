/**
 * How `bothost failed` reaches the dead letters: straight in the state store when it can open it
 * (the daemon is stopped, or the state is in Redis), else through the running daemon's admin
 * routes (a daemon holds its state directory's lock).
 */
import type { Config } from "../config/schema.ts";
import { stateDefaults } from "../config/state-schema.ts";
import { deadLetterOfficeFor } from "../daemon/dead-letter-office-for.ts";
import type { DeadLetterOutcome, DeadLetterSelection } from "../state/dead-letter-office.ts";
import type { DeadLetter } from "../state/dead-letters.ts";
import { FileStore } from "../state/file-store.ts";
import { RedisStore } from "../state/redis-store.ts";
import { isStateError } from "../state/state-error.ts";
import type { StateBackend } from "../state/state-store.ts";
import { daemonClient } from "./daemon-client.ts";

/** The operations of `bothost failed`, wherever the letters are. */
export interface LetterDesk {
  /** "the state store" or "the running daemon at …": said when a retry waits for a start. */
  readonly via: "store" | "daemon";
  list(bot?: string): Promise<DeadLetter[]>;
  get(id: string): Promise<DeadLetter | undefined>;
  retry(selection: DeadLetterSelection): Promise<DeadLetterOutcome>;
  drop(selection: DeadLetterSelection): Promise<DeadLetterOutcome>;
  close(): Promise<void>;
}

export async function openLetterDesk(config: Config): Promise<LetterDesk> {
  let store: StateBackend;
  try {
    store =
      config.state.redis !== undefined
        ? await RedisStore.open({ url: config.state.redis, prefix: config.state.prefix })
        : await FileStore.open(config.state.path ?? stateDefaults.path);
  } catch (err) {
    if (isStateError(err) && err.code === "STATE_LOCKED") return daemonDesk(config);
    throw err;
  }
  const office = deadLetterOfficeFor(config, store);
  return {
    via: "store",
    list: (bot) => office.list(bot),
    get: (id) => office.get(id),
    retry: (selection) => office.retry(selection),
    drop: (selection) => office.drop(selection),
    close: () => store.close(),
  };
}

function daemonDesk(config: Config): LetterDesk {
  const daemon = daemonClient(config, "with the daemon running, bothost failed");
  const one = (id: string) => `/admin/failed/${id.split("/").map(encodeURIComponent).join("/")}`;
  return {
    via: "daemon",
    list: async (bot) =>
      (await daemon.call(
        "GET",
        `/admin/failed${bot ? `?bot=${encodeURIComponent(bot)}` : ""}`,
      )) as DeadLetter[],
    get: async (id) => (await daemon.call("GET", one(id), undefined, true)) as DeadLetter | undefined,
    retry: async (selection) =>
      (await daemon.call("POST", "/admin/failed/retry", selection)) as DeadLetterOutcome,
    drop: async (selection) =>
      (await daemon.call("POST", "/admin/failed/drop", selection)) as DeadLetterOutcome,
    close: async () => {},
  };
}
