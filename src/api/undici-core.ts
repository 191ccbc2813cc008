/**
 * The parts of undici the client uses (a connection, a pool and a connector; calls go out through
 * `dispatch`, src/api/request-text.ts), loaded from undici's own modules rather than its index.
 * The index also loads fetch, WebSocket, EventSource, cookies, cache stores and mocks, and
 * through them Node's bundled copy of undici with a second HTTP parser: about 3 MB of heap and
 * 8 MB of resident memory in every process, for nothing a bot calls. These are undici 7's files;
 * every call the client makes runs through them, so the test suite covers a layout change.
 */
import { createRequire } from "node:module";
import type { buildConnector as BuildConnector, Client, Pool } from "undici";

const load = createRequire(import.meta.url);

/** A socket factory's type (what `buildConnector` returns). */
export type Connector = ReturnType<typeof BuildConnector>;

/** One HTTP/1.1 connection to an origin. */
export const Connection = load("undici/lib/dispatcher/client.js") as typeof Client;
/** Connections to one origin, shared. */
export const ConnectionPool = load("undici/lib/dispatcher/pool.js") as typeof Pool;
/** A socket factory; one may be shared by many connections (and their TLS session cache). */
export const buildConnector = load("undici/lib/core/connect.js") as typeof BuildConnector;
