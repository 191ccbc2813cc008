/**
 * How `bothost failed` reaches the dead letters: straight in the state store when it can open it
 * (the daemon is stopped, or the state is in Redis), else through the running daemon's admin
 * routes (a daemon holds its state directory's lock).
 */
import { request } from "undici";
import type { Config } from "../config/schema.ts";
import { parseListenAddress } from "../config/schema-fields.ts";
import { stateDefaults } from "../config/state-schema.ts";
import { deadLetterOfficeFor } from "../daemon/dead-letter-office-for.ts";
import { BothostError } from "../errors/bothost-error.ts";
import type { DeadLetterOutcome, DeadLetterSelection } from "../state/dead-letter-office.ts";
import type { DeadLetter } from "../state/dead-letters.ts";
import { FileStore } from "../state/file-store.ts";
import { RedisStore } from "../state/redis-store.ts";
import { isStateError } from "../state/state-error.ts";
import type { StateBackend } from "../state/state-store.ts";

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
  const listen = config.http ? parseListenAddress(config.http.listen) : undefined;
  if (!listen) {
    throw new BothostError(
      "DAEMON_UNREACHABLE",
      "the daemon is running (it holds the state directory) and has no HTTP listener to ask: " +
        'add `http: { listen: "127.0.0.1:8080" }` to the config and restart it, or stop it first',
    );
  }
  const host = listen.host === "0.0.0.0" ? "127.0.0.1" : listen.host === "::" ? "::1" : listen.host;
  const base = `http://${host.includes(":") ? `[${host}]` : host}:${listen.port}/admin/failed`;
  const token = config.http?.admin_token;
  /** `body` is POSTed as JSON; `undefined` with GET asks for one letter (404: none). */
  const call = async (
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    one = false,
  ): Promise<unknown> => {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(base + path, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
    } catch (err) {
      throw new BothostError(
        "DAEMON_UNREACHABLE",
        `the daemon holds the state directory but does not answer at ${base}: ${(err as Error).message}`,
      );
    }
    const text = await res.body.text();
    if (one && res.statusCode === 404 && text.includes("no dead letter")) return undefined;
    if (res.statusCode >= 400) throw new BothostError("DAEMON_REFUSED", daemonRefusal(res.statusCode, text));
    return JSON.parse(text) as unknown;
  };
  return {
    via: "daemon",
    list: async (bot) => (await call("GET", bot ? `?bot=${encodeURIComponent(bot)}` : "")) as DeadLetter[],
    get: async (id) =>
      (await call("GET", `/${id.split("/").map(encodeURIComponent).join("/")}`, undefined, true)) as
        | DeadLetter
        | undefined,
    retry: async (selection) => (await call("POST", "/retry", selection)) as DeadLetterOutcome,
    drop: async (selection) => (await call("POST", "/drop", selection)) as DeadLetterOutcome,
    close: async () => {},
  };
}

function daemonRefusal(status: number, text: string): string {
  if (status === 404) {
    return "the running daemon has no admin routes: set http.admin_token, or listen on a loopback address";
  }
  let error = text.slice(0, 200);
  try {
    error = String((JSON.parse(text) as { error?: unknown }).error ?? error);
  } catch {}
  return `the running daemon refused (HTTP ${status}): ${error}`;
}
