/**
 * One undici Pool per server origin (and TLS setting), shared by every client in the process:
 * many bots on one server reuse the same keep-alive connections.
 */
import { Pool } from "undici";

/** TLS settings from a zuliprc (`insecure`, `cert_bundle`). */
export interface TlsOptions {
  /** Skip certificate verification (zuliprc `insecure = true`). Only for test servers. */
  rejectUnauthorized?: boolean;
  /** Extra CA certificates in PEM (zuliprc `cert_bundle`). */
  ca?: string;
}

const pools = new Map<string, Pool>();

/** The shared pool for `origin` with these TLS settings, created on first use. */
export function sharedPool(origin: string, tls: TlsOptions = {}): Pool {
  const key = `${origin} ${tls.rejectUnauthorized === false ? "insecure" : "verify"} ${tls.ca ?? ""}`;
  let pool = pools.get(key);
  if (!pool) {
    const connect = {
      ...(tls.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
      ...(tls.ca ? { ca: tls.ca } : {}),
    };
    pool = new Pool(origin, { connect });
    pools.set(key, pool);
  }
  return pool;
}

/**
 * Close every shared pool, waiting for requests in flight. Call once at process shutdown,
 * after every client's calls have stopped.
 *
 * @example
 * ```ts
 * process.once("SIGTERM", async () => { await runtime.stop(); await closeConnectionPools(); });
 * ```
 */
export async function closeConnectionPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((pool) => pool.close()));
}
