/**
 * startSandbox: an in-memory chat server speaking the real HTTP interface, for tests, the demo
 * and users' own bot tests.
 */

import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { BothostError } from "../errors/bothost-error.ts";
import { serveChat } from "./chat-page.ts";
import { createControl } from "./control.ts";
import { restartEvent, SandboxClock, SandboxCore } from "./core.ts";
import { Faults } from "./faults.ts";
import { DEFAULT_RATE_RULES, RateLimiter } from "./http/rate-limit.ts";
import { createSandboxServer, type RequestLogEntry } from "./http/server.ts";
import { buildState } from "./org/build-state.ts";
import { loadOrg } from "./org/load-org.ts";
import { OutgoingWebhooks } from "./outgoing-webhooks.ts";
import type { StoredQueue } from "./queues/event-queue.ts";
import { allRoutes } from "./routes/index.ts";
import { deliverDueScheduled } from "./scheduler.ts";
import type { SandboxData } from "./state/data.ts";
import type { Sandbox, SandboxOptions } from "./types.ts";

/** How often (real time) due scheduled messages are looked for; they go out at whole sandbox minutes. */
const SCHEDULER_TICK_MS = 1000;

/**
 * Start a sandbox server. Resolves once it listens.
 *
 * @example
 * ```ts
 * import { startSandbox } from "bothost/testing";
 * const sandbox = await startSandbox({ org: "test/org.yaml", heartbeatSeconds: 1 });
 * const key = sandbox.control.apiKeyOf("bot@sandbox.example");
 * // … point a client at sandbox.url …
 * await sandbox.stop();
 * ```
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const clock = new SandboxClock(options.clock ?? Date);
  const stored = options.dataFile ? loadData(options.dataFile) : undefined;
  const storedQueues = stored?.queues ?? [];
  if (stored) delete stored.queues;
  const data: SandboxData = stored ?? buildState(loadOrg(options.org), clock.now());
  // Written once now, so that a file that cannot be written is said at start, not as a 500 (and
  // a crash) at the first change.
  if (options.dataFile) {
    try {
      saveData(options.dataFile, data);
    } catch (err) {
      throw new SandboxDataError(options.dataFile, (err as Error).message, true);
    }
  }
  const core = new SandboxCore(data, clock, {
    heartbeatSeconds: options.heartbeatSeconds,
    longpollTimeoutSeconds: options.longpollTimeoutSeconds,
    queueTimeoutSeconds: options.queueTimeoutSeconds ?? 600,
    gcIntervalSeconds: options.gcIntervalSeconds ?? 60,
  });
  // The queues the last stop wrote come back, as the server's do across a restart, each told of
  // the restart; one idle past its lifetime meanwhile goes at the next collection.
  for (const queue of core.queues.restore(storedQueues)) {
    if (queue.accepts("restart")) queue.push(restartEvent(data.realm.feature_level));
  }
  const webhooks = new OutgoingWebhooks(core);
  const faults = new Faults();
  const limiter = new RateLimiter(
    typeof options.rateLimit === "object" ? options.rateLimit.rules : DEFAULT_RATE_RULES,
    options.rateLimit !== false,
  );
  const log: RequestLogEntry[] = [];
  // A hung poll never gets a status; it is logged with status 0 so tests can see it arrived.
  faults.onHang = () => {
    log.push({ method: "GET", path: "/events", status: 0 });
    core.changed();
  };
  faults.onHold = () => core.changed();
  const saver = options.dataFile ? new DebouncedSaver(options.dataFile, () => core.data) : undefined;
  if (saver) core.onChange(() => saver.schedule());
  const server = createSandboxServer({
    core,
    routes: allRoutes(faults),
    faults,
    limiter,
    log,
    onResponse: options.onResponse,
    // A change is in the file before an answer tells of it (a request's, or a poll's that carries
    // a scheduled message sent): killed then, the sandbox gives no id twice. A GET or a refusal
    // changed nothing itself: the file is written only if a change waits.
    beforeAnswer:
      saver &&
      ((method, status) => (method === "GET" || status >= 400 ? saver.flushPending() : saver.flush())),
    chat: options.chatPage ? (url, res) => serveChat(core, url, res) : undefined,
  });
  const runGc = () => {
    if (core.queues.collectGarbage(clock.now()).length > 0) core.changed();
  };
  const gcTimer = setInterval(runGc, core.options.gcIntervalSeconds * 1000);
  gcTimer.unref();
  const schedulerTimer = setInterval(() => deliverDueScheduled(core), SCHEDULER_TICK_MS);
  schedulerTimer.unref();
  const [port, listenHost] = [options.port ?? 0, options.host ?? "127.0.0.1"];
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err) => reject(new SandboxListenError(listenHost, port, err)));
    server.listen(port, listenHost, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  core.url = `http://${host}:${address.port}`;
  const control = createControl({
    core,
    faults,
    limiter,
    log,
    runGc,
    settleWebhooks: () => webhooks.settle(),
  });
  let stopped: Promise<void> | undefined;
  return {
    url: core.url,
    control,
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        clearInterval(gcTimer);
        clearInterval(schedulerTimer);
        webhooks.stop();
        // The queues are written with the rest (as the server dumps its queues on a stop), before
        // their parked polls are answered; nothing is written after.
        saver?.close({ ...core.data, queues: core.queues.all().map((q) => q.toStored()) });
        core.queues.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}

/** The sandbox's address cannot be listened on: the port in use, no permission, no such host. */
export class SandboxListenError extends BothostError<"SANDBOX_LISTEN_FAILED"> {
  constructor(host: string, port: number, err: NodeJS.ErrnoException) {
    // The host, not the port, is at fault: no interface of this machine has it, or no such name.
    const badHost = err.code === "EADDRNOTAVAIL" || err.code === "ENOTFOUND";
    const why =
      err.code === "EADDRINUSE"
        ? "the port is in use"
        : err.code === "EACCES"
          ? "no permission (a port below 1024 needs one)"
          : err.code === "EADDRNOTAVAIL"
            ? "no interface of this machine has that address"
            : badHost
              ? "no such host name"
              : err.message;
    const fix = badHost
      ? "choose an address of this machine (bothost sandbox --host; default 127.0.0.1)"
      : "choose another port (bothost sandbox --port, or server.sandbox.port in the config; 0 picks a free one)";
    super("SANDBOX_LISTEN_FAILED", `the sandbox cannot listen on ${host}:${port}: ${why}: ${fix}`, {
      cause: err,
    });
    this.name = "SandboxListenError";
  }
}

export class SandboxDataError extends BothostError<"SANDBOX_DATA_INVALID"> {
  constructor(file: string, reason: string, write = false) {
    super(
      "SANDBOX_DATA_INVALID",
      write
        ? `Cannot write sandbox data to ${file}: ${reason}. Create its folder, make it writable, or pick another file.`
        : `Cannot load sandbox data from ${file}: ${reason}. Delete the file to start fresh.`,
    );
    this.name = "SandboxDataError";
  }
}

/** The data file: the state, and the event queues as the last stop left them. */
type StoredData = SandboxData & { queues?: StoredQueue[] };

/**
 * `--data FILE`: loaded at start, written atomically (temp file + rename) shortly after each change
 * and on stop; the event queues are written on stop only, as the server dumps its queues.
 */
export function loadData(file: string): StoredData | undefined {
  if (!existsSync(file)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new SandboxDataError(file, (err as Error).message);
  }
  const data = parsed as Partial<SandboxData>;
  if (data.version !== 1 || !Array.isArray(data.users) || !Array.isArray(data.messages)) {
    throw new SandboxDataError(file, "not a sandbox data file (version 1)");
  }
  const loaded = parsed as StoredData;
  // A file written before the realm had its unique id gets one now (saved with the next change).
  loaded.realm.uuid ??= randomUUID();
  return loaded;
}

export function saveData(file: string, data: StoredData): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(data), { mode: 0o600 });
  renameSync(tmp, file);
}

/** Save at most every `ms` while changes keep coming; `flush()` writes now. */
export class DebouncedSaver {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly file: string,
    private readonly getData: () => SandboxData,
    private readonly ms = 200,
  ) {}

  private closed = false;

  schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      saveData(this.file, this.getData());
    }, this.ms);
    this.timer.unref?.();
  }

  /** Write now if a change waits to be written. */
  flushPending(): void {
    if (this.timer) this.flush();
  }

  /** Write now (`data`: what to write instead of the current state). */
  flush(data: StoredData = this.getData()): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    saveData(this.file, data);
  }

  /** Write `data` as the last word: the changes that follow (the stop's own) are not written over it. */
  close(data: StoredData): void {
    this.flush(data);
    this.closed = true;
  }
}
