/**
 * The parts of undici the client uses (a connection, a pool, a connector and the `request`
 * method), loaded from undici's own modules rather than its index. The index also loads fetch,
 * WebSocket, EventSource, cookies, cache stores and mocks, and through them Node's bundled copy
 * of undici with a second HTTP parser: about 3 MB of heap and 8 MB of resident memory in every
 * process, for nothing a bot calls. These are undici 7's files; every call the client makes
 * runs through them, so the test suite covers a layout change.
 */
import { createRequire } from "node:module";
import type { buildConnector as BuildConnector, Client, Dispatcher, Pool } from "undici";

const load = createRequire(import.meta.url);

/** A socket factory's type (what `buildConnector` returns). */
export type Connector = ReturnType<typeof BuildConnector>;

/** One HTTP/1.1 connection to an origin. */
export const Connection = load("undici/lib/dispatcher/client.js") as typeof Client;
/** Connections to one origin, shared. */
export const ConnectionPool = load("undici/lib/dispatcher/pool.js") as typeof Pool;
/** A socket factory; one may be shared by many connections (and their TLS session cache). */
export const buildConnector = load("undici/lib/core/connect.js") as typeof BuildConnector;

// What undici's index does to give every dispatcher `request()` (and its siblings).
const base = load("undici/lib/dispatcher/dispatcher.js") as typeof Dispatcher;
Object.assign(base.prototype, load("undici/lib/api/index.js") as object);
