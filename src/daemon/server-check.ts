/**
 * At each start of a bot, before any of its state is read: does that state belong to the server
 * the bot talks to now? The identity recorded with the state (`state/server-identity.ts`) is
 * compared with the one the server gives in a registration, one for the bots a daemon starts
 * together on a server (`server-looks.ts`). The bot's own queue registration cannot serve: it needs
 * the event types the bot's setup declares, those its waiting dialogs add and its cursor, and setup
 * (`bot.state`), the ledger and the dialogs read and write the state the check is for. On the
 * embedded sandbox a different instance means the state is from an earlier run: it is cleared and
 * the bot starts afresh. On any other server the bot is refused with `STATE_SERVER_MISMATCH`,
 * naming both, because applying another organization's cursor, handled marks and bookings would
 * skip or cancel the wrong things.
 */
import type { Logger } from "pino";
import type { Client } from "../api/create-client.ts";
import { isAuthError } from "../api/errors.ts";
import { describeRedis, type RedisTarget } from "../state/redis-url.ts";
import {
  describeServer,
  identityChanged,
  readServerIdentity,
  type ServerIdentity,
  sameServer,
  writeServerIdentity,
} from "../state/server-identity.ts";
import { StateError } from "../state/state-error.ts";
import type { StateStore } from "../state/state-store.ts";
import type { Clock } from "../time/clock.ts";
import { registerOnce } from "../webhook/webhook-mode.ts";
import type { RegisterResponse } from "../wire/responses.ts";
import type { ServerLooks } from "./server-looks.ts";

export { ServerLooks } from "./server-looks.ts";

export interface ServerCheckOptions {
  bot: string;
  client: Client;
  /** The root store as the bot's runtime gets it; the bot's namespace is recorded and cleared. */
  store: StateStore;
  /** The URL the bot talks to (the embedded sandbox's, for `url: sandbox`). */
  url: string;
  /** The bot runs on the embedded sandbox: another instance starts it afresh instead of stopping. */
  sandbox: boolean;
  /** Where the state lives, for the error (e.g. `state.path /srv/bots/.bothost`). */
  location: StateLocation;
  log: Logger;
  /** Retry delays while the server cannot be reached, and what they wait on. */
  backoff: { initialMs: number; maxMs: number };
  clock: Clock;
  /** A queue bot's look at the server, shared with the bots started with it (server-looks.ts). */
  looks?: ServerLooks;
}

/** Where a daemon keeps its state. */
export type StateLocation = { path: string } | { redis: RedisTarget; prefix: string };

/** Where `store` keeps its state: a FileStore's directory, or a RedisStore's server and prefix. */
export function stateLocation(store: StateStore): StateLocation {
  // Read off the store: the Redis client's code is loaded only for a daemon that uses it.
  const s = store as { dir?: unknown; url?: unknown; prefix?: unknown };
  // A URL, or a Sentinel group (an object naming the primary and its Sentinels).
  const redis = typeof s.url === "string" || (typeof s.url === "object" && s.url !== null);
  if (redis && typeof s.prefix === "string") return { redis: s.url as RedisTarget, prefix: s.prefix };
  return { path: typeof s.dir === "string" ? s.dir : "(memory)" };
}

/**
 * What the check found. `registered`: an outgoing-webhook bot's registration (its queue already
 * deleted), which it uses as its own; undefined for a queue bot, and when the server rejected the
 * bot's credentials (the bot's source then meets the same answer and stops the bot as it always
 * does). `record`: nothing was recorded with the state, so there is nothing to compare and no
 * request was made; the bot's queue passes its first registration here to record the server.
 */
export type ServerCheckResult =
  | { registered: RegisterResponse | undefined; record?: undefined }
  | { registered?: undefined; record(reg: RegisterResponse): Promise<void> };

/**
 * The check as a bot runtime's `checkServer`. `queue`: the bot registers a queue right after
 * (then a state with no recorded server costs no request). Rejects with `STATE_SERVER_MISMATCH`
 * for another real server.
 */
export function serverCheck(
  o: ServerCheckOptions,
): (signal: AbortSignal, queue: boolean) => Promise<ServerCheckResult> {
  return async (signal, queue) => {
    const botStore = o.store.namespace(o.bot);
    if (queue && (await readServerIdentity(botStore)) === undefined) {
      // A first start (or state from before servers were recorded): nothing to compare yet.
      return { record: (reg) => writeServerIdentity(botStore, identityFrom(o.url, reg)) };
    }
    if (!queue) {
      const reg = await register(o, signal);
      if (reg !== undefined) await settle(o, identityFrom(o.url, reg));
      return { registered: reg };
    }
    const look = async () => {
      const reg = await register(o, signal);
      return reg && identityFrom(o.url, reg);
    };
    const current = await (o.looks ? o.looks.identity(o.url, signal, look) : look());
    if (current !== undefined) await settle(o, current);
    return { registered: undefined };
  };
}

/** A registration to learn the server, or undefined when the key is rejected or `signal` aborts. */
async function register(o: ServerCheckOptions, signal: AbortSignal): Promise<RegisterResponse | undefined> {
  try {
    return await registerOnce({ client: o.client, signal, log: o.log, backoff: o.backoff, clock: o.clock });
  } catch (err) {
    if (signal.aborted || isAuthError(err)) return undefined;
    throw err;
  }
}

/** The identity a registration gives (with `realm` in its fetch set, as every bot's has). */
export function identityFrom(url: string, reg: RegisterResponse): ServerIdentity {
  const realmUrl = reg.realm_url ?? reg.realm_uri;
  return {
    url,
    ...(realmUrl !== undefined ? { realm_url: realmUrl } : {}),
    ...(reg.realm_date_created !== undefined ? { realm_date_created: reg.realm_date_created } : {}),
    ...(reg.realm_uuid !== undefined ? { realm_uuid: reg.realm_uuid } : {}),
  };
}

async function settle(o: ServerCheckOptions, current: ServerIdentity): Promise<void> {
  const botStore = o.store.namespace(o.bot);
  const recorded = await readServerIdentity(botStore);
  if (recorded === undefined || sameServer(recorded, current)) {
    // First start (or state from before identities were recorded), or more now known of it.
    if (recorded === undefined || identityChanged(recorded, current))
      await writeServerIdentity(botStore, current);
    return;
  }
  if (!o.sandbox) throw mismatch(o, recorded, current);
  const deleted = await botStore.clear();
  await writeServerIdentity(botStore, current);
  o.log.info(
    { was: describeServer(recorded), now: describeServer(current), deletedKeys: deleted },
    "state was from another sandbox instance: cleared, this bot starts afresh",
  );
}

function mismatch(o: ServerCheckOptions, recorded: ServerIdentity, current: ServerIdentity): StateError {
  const where = o.location;
  const [at, reset, move] =
    "path" in where
      ? [
          `the state directory ${where.path}`,
          `delete that directory (every bot's state in it)`,
          "set state.path to another directory",
        ]
      : [
          `Redis ${describeRedis(where.redis)} under prefix "${where.prefix}"`,
          `delete its keys "${where.prefix}:${o.bot}/*"`,
          "set state.prefix to another prefix",
        ];
  return new StateError(
    "STATE_SERVER_MISMATCH",
    `bot "${o.bot}": its state in ${at} was recorded with ${describeServer(recorded)}, ` +
      `but the server is now ${describeServer(current)}. Its cursor, handled marks and bookings ` +
      "belong to the other server, so it was not started. To start it afresh on this server, " +
      `${reset}; to keep that state for the other server, ${move}.`,
  );
}
