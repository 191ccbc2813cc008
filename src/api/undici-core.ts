/**
 * The parts of undici the client uses (a connection, a pool and a connector; calls go out through
 * `dispatch`, src/api/request-text.ts), loaded from undici's own modules rather than its index.
 * The index also loads fetch, WebSocket, EventSource, cookies, cache stores and mocks, and
 * through them Node's bundled copy of undici with a second HTTP parser: about 3 MB of heap and
 * 8 MB of resident memory in every process, for nothing a bot calls. These are one release's
 * files (undici is pinned exactly): another release is refused at load, naming both versions,
 * and test/api/undici-core.test.ts checks each internal's shape.
 */
import { createRequire } from "node:module";
import type { buildConnector as BuildConnector, Client, Pool } from "undici";

const load = createRequire(import.meta.url);

/** The undici release these internal paths and shapes are those of; package.json pins it exactly. */
export const UNDICI_VERSION = "7.30.2";

const installed = (load("undici/package.json") as { version: string }).version;
if (installed !== UNDICI_VERSION) {
  throw new Error(
    `bothost needs undici ${UNDICI_VERSION} exactly (it loads undici's internal modules), but ${installed} ` +
      "is installed: reinstall bothost's dependencies (npm ci) so that package-lock.json's version is used.",
  );
}

/** A socket factory's type (what `buildConnector` returns). */
export type Connector = ReturnType<typeof BuildConnector>;

/** One HTTP/1.1 connection to an origin. */
export const Connection = load("undici/lib/dispatcher/client.js") as typeof Client;
/** Connections to one origin, shared. */
export const ConnectionPool = load("undici/lib/dispatcher/pool.js") as typeof Pool;
/** A socket factory; one may be shared by many connections (and their TLS session cache). */
export const buildConnector = load("undici/lib/core/connect.js") as typeof BuildConnector;
