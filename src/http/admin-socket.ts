/**
 * The daemon's admin socket: the admin routes (admin-routes.ts) as HTTP on a Unix socket, always
 * on, with no token. Only the daemon's user can connect: the file is mode 0600, in the state
 * directory (0700) or a per-user folder (see admin-socket-path.ts). A socket file left by a killed
 * daemon is replaced; one a live daemon answers on is not.
 */

import { chmod, lstat, rm } from "node:fs/promises";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { connect } from "node:net";
import type { Logger } from "pino";
import { isInRuntimeDir, MAX_SOCKET_PATH_BYTES, runtimeDir } from "../config/admin-socket-path.ts";
import { BothostError } from "../errors/bothost-error.ts";
import { makeDirs } from "../state/make-dirs.ts";
import type { Clock, TimerHandle } from "../time/clock.ts";
import { type AdminAnswer, type AdminHandlers, type AdminRoute, adminRoutes } from "./admin-routes.ts";
import { clearStopping } from "./stopping-mark.ts";

/**
 * How an operator reaches an instance that runs without the admin socket: the commands reach the
 * holder only, until it is gone and an instance takes the socket over.
 */
const TAKEN_FIX =
  "bothost status, dialogs, failed and reload reach that daemon (an instance takes the socket over once it no longer answers); to reach this one meanwhile, start it from a config file of its own (a copy, not a symlink) or ask the admin routes of its http.listen";

export type AdminSocketErrorCode = "ADMIN_SOCKET_IN_USE" | "ADMIN_SOCKET_FAILED";

/** The admin socket cannot be made; the message names the path and what to do. */
export class AdminSocketError extends BothostError<AdminSocketErrorCode> {
  override readonly name = "AdminSocketError";
}

export interface AdminSocketOptions {
  path: string;
  handlers: AdminHandlers;
  log: Logger;
  /**
   * When a live daemon already answers on the path: `"fail"` (a daemon with its state on disk:
   * ADMIN_SOCKET_IN_USE), or `"skip"` (instances sharing Redis state on one machine: the first
   * one keeps the socket, the others run without).
   */
  ifTaken: "fail" | "skip";
}

/** Largest request body the socket reads (the routes take a list of ids at most). */
const BODY_LIMIT = 1024 * 1024;

export class AdminSocket {
  readonly path: string;
  readonly #server: Server;
  /** The socket file this one made (device and inode): another process may replace or remove it. */
  readonly #file: string | undefined;

  private constructor(path: string, server: Server, file: string | undefined) {
    this.path = path;
    this.#server = server;
    this.#file = file;
  }

  /** Listen on `options.path`; undefined when it is taken and `ifTaken` is "skip". */
  static async open(options: AdminSocketOptions): Promise<AdminSocket | undefined> {
    const { path, log } = options;
    const posix = process.platform !== "win32";
    if (posix && Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
      throw new AdminSocketError(
        "ADMIN_SOCKET_FAILED",
        `the admin socket's path ${path} is longer than ${MAX_SOCKET_PATH_BYTES} bytes, the most a socket path may have: set TMPDIR to a shorter folder`,
      );
    }
    if (posix && isInRuntimeDir(path)) await makeRuntimeDir();
    const { createServer } = await import("node:http");
    const routes = adminRoutes(options.handlers);
    const server = createServer((req, res) => void serve(routes, req, res, log));
    try {
      await listen(server, path);
    } catch (err) {
      if (!posix || (err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw failed(path, err);
      if (await answers(path)) {
        if (options.ifTaken === "skip") {
          log.warn(
            { socket: path, fix: TAKEN_FIX },
            "another daemon answers on the admin socket: this one runs without it",
          );
          return undefined;
        }
        throw new AdminSocketError(
          "ADMIN_SOCKET_IN_USE",
          `another bothost daemon is running with this state: it answers on ${path}. ` +
            `Stop it first (bothost status shows its pid), or give this one another state.path.`,
        );
      }
      // Left by a daemon that was killed: nothing answers, so it is replaced.
      if (!(await lstat(path)).isSocket()) {
        throw new AdminSocketError(
          "ADMIN_SOCKET_FAILED",
          `${path} exists and is not a socket: move it away so the daemon can make its admin socket there`,
        );
      }
      await rm(path, { force: true });
      await listen(server, path).catch((again: unknown) => {
        throw failed(path, again);
      });
    }
    if (posix) await chmod(path, 0o600);
    await clearStopping(path); // left by a daemon killed while it stopped
    log.info({ socket: path }, "admin socket listening");
    return new AdminSocket(path, server, posix ? await fileOf(path) : undefined);
  }

  /**
   * Whether the file at the path is still the one this socket made: instances sharing the path
   * (Redis state, one config) can replace it, two taking it over at once, or it can be removed.
   */
  async holdsPath(): Promise<boolean> {
    return this.#file === undefined || (await fileOf(this.path)) === this.#file;
  }

  /** Stop answering (requests in flight are cut off) and remove the socket file, unless another daemon's replaced it. */
  async close(): Promise<void> {
    const own = await this.holdsPath();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
    // Already gone is fine; a file that cannot be removed is replaced at the next start.
    if (own && process.platform !== "win32") await rm(this.path, { force: true }).catch(() => {});
  }
}

/** The device and inode of the file at `path`, undefined when there is none. */
async function fileOf(path: string): Promise<string | undefined> {
  const s = await lstat(path).catch(() => undefined);
  return s && `${s.dev}:${s.ino}`;
}

/** How often an instance sharing the admin socket's path checks who holds it. */
const TAKE_OVER_CHECK_MS = 2_000;

/**
 * For instances of one host sharing the admin socket's path (Redis state, one config): every
 * {@link TAKE_OVER_CHECK_MS} on `o.clock`, until `o.signal` aborts (the daemon's stop), an
 * instance holding the socket checks that the file is still its own (another instance can replace
 * it, when two take it over at once, or it can be removed), and lets it go when it is not; one
 * without it takes it (`open`) once nothing answers there (its holder stopped, or was killed), so
 * that the commands reach a daemon still running the bots. `held` is told each change. A socket
 * that cannot be made is logged, and no longer tried.
 */
export function keepAdminSocket(
  first: AdminSocket | undefined,
  open: () => Promise<AdminSocket | undefined>,
  held: (socket: AdminSocket | undefined) => void,
  o: { path: string; log: Logger; signal: AbortSignal; clock: Clock },
): void {
  let timer: TimerHandle | undefined;
  let socket = first;
  const check = async () => {
    try {
      if (socket !== undefined && !(await socket.holdsPath())) {
        if (o.signal.aborted) return; // the daemon's stop closed it (and removed the file)
        o.log.warn(
          { socket: o.path },
          "the admin socket's file was replaced or removed: this instance lets it go",
        );
        const gone = socket;
        socket = undefined;
        held(undefined);
        await gone.close();
      }
      if (socket === undefined && !(await answers(o.path))) {
        const taken = await open();
        if (taken !== undefined && o.signal.aborted) return await taken.close();
        socket = taken;
        if (taken !== undefined) held(taken);
      }
    } catch (err) {
      return o.log.warn(
        { err, socket: o.path },
        "could not take over the admin socket: this instance runs without it",
      );
    }
    if (!o.signal.aborted) timer = o.clock.setTimeout(() => void check(), TAKE_OVER_CHECK_MS);
  };
  timer = o.clock.setTimeout(() => void check(), TAKE_OVER_CHECK_MS);
  o.signal.addEventListener("abort", () => timer !== undefined && o.clock.clearTimeout(timer), {
    once: true,
  });
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once("error", onError);
    // The socket file is made during listen(): with this umask it is owner-only from the start,
    // before the chmod that follows (a worker thread cannot change the umask; the chmod still runs).
    const umask = trySetUmask(0o177);
    try {
      server.listen(path, () => {
        server.off("error", onError);
        resolve();
      });
    } finally {
      if (umask !== undefined) process.umask(umask);
    }
  });
}

function trySetUmask(mask: number): number | undefined {
  try {
    return process.platform === "win32" ? undefined : process.umask(mask);
  } catch {
    return undefined;
  }
}

/** True when a process accepts connections on the socket (a live daemon answers on its admin socket). */
export function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function makeRuntimeDir(): Promise<void> {
  const dir = runtimeDir();
  await makeDirs(dir, 0o700);
  const s = await lstat(dir);
  const mine = process.getuid === undefined || s.uid === process.getuid();
  if (!s.isDirectory() || !mine || (s.mode & 0o077) !== 0) {
    throw new AdminSocketError(
      "ADMIN_SOCKET_FAILED",
      `${dir} must be a folder of this user that nobody else can open (mode 0700), for the admin socket: remove it, or fix its owner and mode`,
    );
  }
}

function failed(path: string, err: unknown): AdminSocketError {
  return new AdminSocketError(
    "ADMIN_SOCKET_FAILED",
    `cannot listen on the admin socket ${path}: ${(err as Error).message}`,
    { cause: err },
  );
}

async function serve(routes: AdminRoute[], req: IncomingMessage, res: ServerResponse, log: Logger) {
  const url = new URL(req.url ?? "/", "http://admin");
  let answer: AdminAnswer;
  try {
    const found = match(routes, req.method ?? "GET", url.pathname);
    if (!found) {
      answer = { status: 404, body: { error: `no route for ${req.method} ${url.pathname}` } };
    } else {
      const body = await readJson(req);
      answer =
        body instanceof Error
          ? { status: 400, body: { error: body.message } }
          : await found.route.handle({
              params: found.params,
              query: Object.fromEntries(url.searchParams),
              body,
            });
    }
  } catch (err) {
    log.error({ err, path: url.pathname }, "admin socket request failed");
    answer = { status: 500, body: { error: "internal error" } };
  }
  const text = answer.html ? String(answer.body) : JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    "content-type": answer.html ? "text/html; charset=utf-8" : "application/json; charset=utf-8",
    "cache-control": "no-store",
  });
  res.end(text);
}

function match(routes: AdminRoute[], method: string, pathname: string) {
  const given = pathname.split("/");
  for (const route of routes) {
    const want = route.path.split("/");
    if (route.method !== method || want.length !== given.length) continue;
    const params: Record<string, string> = {};
    let same = true;
    for (const [i, w] of want.entries()) {
      if (w.startsWith(":")) params[w.slice(1)] = decode(given[i]!);
      else same &&= w === given[i];
    }
    if (same) return { route, params };
  }
  return undefined;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The request's JSON body (undefined when empty), or an Error saying why it cannot be read. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) return new Error(`the body is larger than ${BODY_LIMIT} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return new Error("the body is not JSON");
  }
}
