/**
 * Asks the running daemon: on its admin socket first (no token: the file's permissions guard it),
 * then, when the config has `http:`, through the HTTP listener's admin routes (with
 * `http.admin_token` if set), for a daemon whose socket this machine cannot see.
 */
import { requestText } from "../api/request-text.ts";
import { Connection } from "../api/undici-core.ts";
import type { AdminView } from "../config/admin-view.ts";
import { formatProblems } from "../config/config-problem.ts";
import { parseListenAddress } from "../config/schema-fields.ts";
import { BothostError } from "../errors/bothost-error.ts";
import { stoppingPid } from "../http/stopping-mark.ts";

interface Channel {
  /** How messages name it: "the admin socket /…/admin.sock" or "http://127.0.0.1:8080 (http.listen)". */
  readonly name: string;
  readonly headers: Record<string, string>;
  /** One connection (undici's own modules, as the API client's: not its index, fetch and all). */
  readonly connection: InstanceType<typeof Connection>;
}

/** How long a call waits for the daemon's answer unless it says otherwise. */
const ANSWER_WAIT_MS = 10_000;

export interface DaemonClient {
  /**
   * GET or POST (with a JSON body); resolves the parsed answer, or undefined on a 404 when
   * `missingOk`. Waits up to `waitMs` (default 10 s) for the answer; a daemon that took the
   * request but did not answer in time is `DAEMON_SLOW`, one that closed the connection before
   * answering `DAEMON_CLOSED` (no other channel is tried: it may act).
   */
  call(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    missingOk?: boolean,
    waitMs?: number,
  ): Promise<unknown>;
  /** True when a daemon answers on one of the channels (the first call then uses it). */
  reachable(): Promise<boolean>;
  close(): Promise<void>;
}

export function daemonClient(view: Pick<AdminView, "socket" | "http" | "problems">): DaemonClient {
  const channels: Channel[] = [
    {
      name: `the admin socket ${view.socket}`,
      headers: {},
      connection: new Connection("http://localhost", { connect: { socketPath: view.socket } }),
    },
  ];
  const listen = view.http ? parseListenAddress(view.http.listen) : undefined;
  // Port 0: the daemon took a free port at its start, which this config does not say.
  if (listen && listen.port !== 0) {
    const host = listen.host === "0.0.0.0" ? "127.0.0.1" : listen.host === "::" ? "::1" : listen.host;
    const token = view.http?.admin_token;
    const base = `http://${host.includes(":") ? `[${host}]` : host}:${listen.port}`;
    channels.push({
      name: `${base} (http.listen)`,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      connection: new Connection(base),
    });
  }
  let chosen: Channel | undefined;

  async function send(
    channel: Channel,
    method: string,
    path: string,
    body: unknown,
    waitMs = ANSWER_WAIT_MS,
  ) {
    return requestText(channel.connection, {
      path,
      method: method as "GET" | "POST",
      headers: {
        ...channel.headers,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      headersTimeout: waitMs,
      bodyTimeout: waitMs,
    }).catch((err: unknown) => {
      const code = (err as { code?: string }).code;
      if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
        throw new BothostError(
          "DAEMON_SLOW",
          `the daemon took the request on ${channel.name} but did not answer within ${Math.round(waitMs / 1000)} s; its log says what it did`,
        );
      }
      // Connected, the request sent, then the connection closed: the daemon stopped (or died) meanwhile.
      if (code === "UND_ERR_SOCKET") {
        throw new BothostError(
          "DAEMON_CLOSED",
          `the daemon took the request on ${channel.name} but closed the connection before answering (it stopped or died meanwhile); whether it acted, its log says`,
        );
      }
      throw err;
    });
  }

  /** The answer on the first channel that connects; remembers it. */
  async function first(method: string, path: string, body: unknown, waitMs?: number) {
    if (chosen)
      return { channel: chosen, res: await send(chosen, method, path, body, waitMs).catch(lost(chosen)) };
    // What this attempt met on each channel: a later call (after reachable()) says each once.
    const tried: string[] = [];
    for (const channel of channels) {
      try {
        const res = await send(channel, method, path, body, waitMs);
        chosen = channel;
        return { channel, res };
      } catch (err) {
        if (tookIt(err)) throw err;
        tried.push(`${channel.name}: ${reason(err)}`);
      }
    }
    // Its socket closed as a clean stop began: the daemon drains its handlers, and says so in a mark.
    const stopping = await stoppingPid(view.socket);
    if (stopping !== undefined) {
      throw new BothostError(
        "DAEMON_STOPPING",
        `the daemon (pid ${stopping}) is stopping: its admin socket ${view.socket} is closed while it lets its handlers finish (up to shutdown_timeout). Run the command again once it has stopped.`,
      );
    }
    throw new BothostError(
      "DAEMON_UNREACHABLE",
      `no daemon answers: ${tried.join("; ")}. Is it running with this config?` +
        (view.problems.length > 0
          ? ` http: was not tried, as it has problems:\n${formatProblems(view.problems)}`
          : listen?.port === 0
            ? " (http.listen has port 0: the daemon's HTTP port is chosen at its start, so only its admin socket is tried.)"
            : listen
              ? ""
              : " (A daemon on another machine is reached through its http.listen, which this config has no http: for.)"),
    );
  }

  return {
    async call(method, path, body, missingOk = false, waitMs) {
      const { res } = await first(method, path, body, waitMs);
      const text = res.text;
      if (missingOk && res.statusCode === 404 && !isRouteMissing(text)) return undefined;
      if (res.statusCode >= 400) {
        // The daemon's own code, when it gave one, is the refusal's cause (`DIALOG_STARTING`).
        const code = refusedCode(text);
        throw new BothostError("DAEMON_REFUSED", refusal(res.statusCode, text), {
          ...(code && { cause: new BothostError(code, daemonError(text)) }),
        });
      }
      return JSON.parse(text) as unknown;
    },
    async reachable() {
      try {
        await first("GET", "/admin/status", undefined);
        return true;
      } catch (err) {
        // A stopping daemon answers nothing more: on Redis the store is read directly meanwhile.
        if (
          err instanceof BothostError &&
          (err.code === "DAEMON_UNREACHABLE" || err.code === "DAEMON_STOPPING")
        )
          return false;
        throw err;
      }
    },
    close: async () => {
      await Promise.all(channels.map((c) => c.connection.close()));
    },
  };
}

function lost(channel: Channel) {
  return (err: unknown): never => {
    if (tookIt(err)) throw err;
    throw new BothostError(
      "DAEMON_UNREACHABLE",
      `the daemon stopped answering on ${channel.name}: ${reason(err)}`,
    );
  };
}

/** The daemon took the request (it may act on it): no other channel is tried, no signal sent. */
const tookIt = (err: unknown) =>
  err instanceof BothostError && (err.code === "DAEMON_SLOW" || err.code === "DAEMON_CLOSED");

function reason(err: unknown): string {
  const code = (err as { code?: string }).code;
  if (code === "ENOENT") return "no such socket";
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "EACCES") return "permission denied (run the command as the daemon's user)";
  return (err as Error).message;
}

function isRouteMissing(text: string): boolean {
  return text.includes("no route for");
}

/** The `code` of a refusal's JSON body, if it has one. */
function refusedCode(text: string): string | undefined {
  try {
    const code = (JSON.parse(text) as { code?: unknown }).code;
    return typeof code === "string" ? code : undefined;
  } catch {
    return undefined;
  }
}

function refusal(status: number, text: string): string {
  if (status === 404 && isRouteMissing(text)) {
    return "the running daemon has no admin routes: set http.admin_token, or listen on a loopback address";
  }
  // A 5xx is no refusal: the daemon failed the request (its state store did not answer, say).
  return `the running daemon ${status >= 500 ? FAILED : "refused"} (HTTP ${status}): ${daemonError(text)}`;
}

/** The daemon's own words in an answer's body: its `error`, else the body's start. */
function daemonError(text: string): string {
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    if (error !== undefined) return String(error);
  } catch {}
  return text.slice(0, 200);
}

const FAILED = "failed the request";

/** The status and error text of a 5xx answer: the daemon failed the request, it refused nothing. */
export function failedRequest(err: unknown): { status: number; error: string } | undefined {
  if (!(err instanceof BothostError) || err.code !== "DAEMON_REFUSED") return undefined;
  const m = new RegExp(`^the running daemon ${FAILED} \\(HTTP (\\d+)\\): `).exec(err.message);
  return m ? { status: Number(m[1]), error: err.message.slice(m[0].length) } : undefined;
}
