import type { ServerResponse } from "node:http";

/** Write a JSON body the way the server does: compact, with a trailing newline. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed || res.writableEnded) return;
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    ...headers,
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** Success body: `result` and `msg` first, then the data (as the server's json_response). */
export function success(data: Record<string, unknown> = {}): Record<string, unknown> {
  return { result: "success", msg: "", ...data };
}
