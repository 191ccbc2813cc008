/**
 * How a Redis URL may be shown, apart from the client: the daemon names a Redis state location
 * without loading ioredis (which only a Redis store needs).
 */

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
