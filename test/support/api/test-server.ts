/**
 * A real HTTP server on port 0 that records each request and answers with scripted responses.
 * The client under test talks to it over real sockets.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  /** Raw path without the query, e.g. "/api/v1/users/user12%40example.org". */
  path: string;
  query: Record<string, string>;
  /** Decoded form body. */
  body: Record<string, string>;
  rawBody: string;
  headers: IncomingHttpHeaders;
  /** Client-side port of the connection, to tell connections apart. */
  remotePort: number | undefined;
}

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON unless `raw` is given. */
  json?: unknown;
  raw?: string;
  /** Never answer (a parked long-poll); the connection is cut at teardown. */
  hang?: boolean;
  /** Cut the connection after reading the request. */
  destroy?: boolean;
}

export interface TestServer {
  /** e.g. "http://127.0.0.1:41234" */
  url: string;
  requests: RecordedRequest[];
  /** Queue responses, used one per request in order; afterwards `fallback` answers. */
  reply(...responses: ScriptedResponse[]): void;
  /** The answer once the queue is empty (default: a bare success body). */
  fallback: ScriptedResponse;
  close(): Promise<void>;
}

export const success = (data: Record<string, unknown> = {}): ScriptedResponse => ({
  json: { result: "success", msg: "", ...data },
});

export const failure = (
  status: number,
  body: Record<string, unknown>,
  headers?: Record<string, string>,
): ScriptedResponse => ({
  status,
  json: { result: "error", ...body },
  ...(headers ? { headers } : {}),
});

export async function startTestServer(): Promise<TestServer> {
  const queue: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const url = new URL(req.url ?? "/", "http://localhost");
      requests.push({
        method: req.method ?? "",
        path: (req.url ?? "").split("?")[0] ?? "",
        query: Object.fromEntries(url.searchParams),
        body: Object.fromEntries(new URLSearchParams(rawBody)),
        rawBody,
        headers: req.headers,
        remotePort: req.socket.remotePort,
      });
      const script = queue.shift() ?? handle.fallback;
      if (script.hang) return;
      if (script.destroy) {
        req.socket.destroy();
        return;
      }
      const isJson = script.raw === undefined;
      res.writeHead(script.status ?? 200, {
        "content-type": isJson ? "application/json" : "text/html",
        ...script.headers,
      });
      res.end(isJson ? `${JSON.stringify(script.json ?? { result: "success", msg: "" })}\n` : script.raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const handle: TestServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply: (...responses) => queue.push(...responses),
    fallback: success(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return handle;
}
