/** Asks the running daemon through its HTTP listener's admin routes (with `http.admin_token` if set). */
import { request } from "undici";
import type { Config } from "../config/schema.ts";
import { parseListenAddress } from "../config/schema-fields.ts";
import { BothostError } from "../errors/bothost-error.ts";

export function daemonClient(config: Config, purpose: string) {
  const listen = config.http ? parseListenAddress(config.http.listen) : undefined;
  if (!listen) {
    throw new BothostError(
      "DAEMON_UNREACHABLE",
      `${purpose} asks the running daemon through its HTTP listener, and the config has none: ` +
        'add `http: { listen: "127.0.0.1:8080" }` and restart the daemon',
    );
  }
  const host = listen.host === "0.0.0.0" ? "127.0.0.1" : listen.host === "::" ? "::1" : listen.host;
  const base = `http://${host.includes(":") ? `[${host}]` : host}:${listen.port}`;
  const token = config.http?.admin_token;
  return {
    /** GET or POST (with a JSON body); resolves the parsed answer, or undefined on a 404 when `missingOk`. */
    async call(method: "GET" | "POST", path: string, body?: unknown, missingOk = false): Promise<unknown> {
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(base + path, {
          method,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          headersTimeout: 10_000,
          bodyTimeout: 10_000,
        });
      } catch (err) {
        throw new BothostError(
          "DAEMON_UNREACHABLE",
          `no daemon answers at ${base} (http.listen): ${(err as Error).message}. Is it running?`,
        );
      }
      const text = await res.body.text();
      if (missingOk && res.statusCode === 404 && !isRouteMissing(text)) return undefined;
      if (res.statusCode >= 400) throw new BothostError("DAEMON_REFUSED", refusal(res.statusCode, text));
      return JSON.parse(text) as unknown;
    },
  };
}

function isRouteMissing(text: string): boolean {
  return text.includes("no route for");
}

function refusal(status: number, text: string): string {
  if (status === 404 && isRouteMissing(text)) {
    return "the running daemon has no admin routes: set http.admin_token, or listen on a loopback address";
  }
  let error = text.slice(0, 200);
  try {
    error = String((JSON.parse(text) as { error?: unknown }).error ?? error);
  } catch {}
  return `the running daemon refused (HTTP ${status}): ${error}`;
}
