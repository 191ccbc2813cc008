/**
 * Where the Redis store lives, and how it may be shown, apart from the client: the daemon names a
 * Redis state location without loading ioredis (which only a Redis store needs).
 */

/** A primary found through Sentinel (config `state.redis: { sentinels, name, … }`). */
export interface SentinelTarget {
  /** `host:port` of each Sentinel. */
  readonly sentinels: readonly string[];
  /** The master group the Sentinels watch (`sentinel monitor <name> …`). */
  readonly name: string;
  readonly db?: number;
  readonly password?: string;
  readonly sentinelPassword?: string;
  readonly tls?: boolean;
}

/** A URL (`redis://[:password@]host[:port][/db]`, `rediss://` for TLS), or Sentinel. */
export type RedisTarget = string | SentinelTarget;

/** The Redis store as `bothost status` and `/status` show it. */
/** How many of the configured Sentinels answered for the master group, and how many a failover needs. */
export interface SentinelsReached {
  answered: number;
  of: number;
  /** The group's quorum (as the Sentinels that answered report it), and at least a majority of them all. */
  needed: number;
  /** The Sentinels (`host:port`) that did not answer for the group: out of reach, or not monitoring it. */
  silent: string[];
  /** The Sentinels that refused the authentication, each with why (`WRONGPASS`, `NOAUTH`) and the setting to fix. */
  refusing?: { sentinel: string; why: string }[];
  /** Answering Sentinels that name another primary (`names`, `host:port`) than a majority of them all do. */
  otherPrimary?: { sentinel: string; names: string }[];
}

export interface RedisStatus {
  /** `host:port` of the primary the store's connection reaches (or last reached). */
  primary?: string;
  /** Through Sentinel: the master group and the Sentinels asked for its primary. */
  sentinel?: { name: string; sentinels: string[] };
  /** Primary changes this daemon's store connection saw. */
  failovers: number;
  /** Writes count only once the replicas have them (`WAIT`). */
  replicaConfirmed: boolean;
  /** Present while the connection is down (reconnecting): `primary` is the one last reached. */
  disconnected?: true;
  /** Through Sentinel: how many of the Sentinels answered for the group at the last check (every 5 s). */
  sentinelsReached?: SentinelsReached;
}

/** `host:port/db` of a Redis URL: what messages and logs may show (never the password). */
export function describeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    const db = u.pathname.replace(/^\//, "") || "0";
    return `${u.protocol}//${u.hostname}:${u.port || "6379"}/${db}`;
  } catch {
    return "(an invalid Redis URL)";
  }
}

/** A target as messages may show it: the URL without its password, or the Sentinel group. */
export function describeRedis(target: RedisTarget): string {
  if (typeof target === "string") return describeRedisUrl(target);
  return `sentinel master "${target.name}" (db ${target.db ?? 0}) via ${target.sentinels.join(",")}`;
}

/** `host:port` → its parts (IPv6 hosts in brackets: `[::1]:26379`). */
export function hostPort(text: string): { host: string; port: number } {
  const at = text.lastIndexOf(":");
  return { host: text.slice(0, at).replace(/^\[(.*)\]$/, "$1"), port: Number(text.slice(at + 1)) };
}
