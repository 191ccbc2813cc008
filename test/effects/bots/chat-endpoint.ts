/**
 * An imitation of an OpenAI-compatible chat-completions endpoint on 127.0.0.1, port 0: each
 * request takes the next queued behaviour (a streamed answer by default), and is kept for the
 * test to read.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Behaviour =
  | { kind: "stream"; chunks: string[]; usage?: number }
  /** An error answer: this status and JSON body. */
  | { kind: "error"; status: number; body: unknown }
  /** Headers never come. */
  | { kind: "silent" }
  /** These chunks, then nothing more (the connection stays open). */
  | { kind: "stall"; chunks: string[] }
  /** These chunks, then the connection is cut mid-answer. */
  | { kind: "cut"; chunks: string[] };

export interface ChatEndpoint {
  /** The base URL, `http://127.0.0.1:<port>/v1`. */
  url: string;
  queue(...behaviours: Behaviour[]): void;
  readonly requests: { authorization: string | undefined; body: Record<string, unknown> }[];
  stop(): Promise<void>;
}

const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const delta = (content: string) => event({ choices: [{ index: 0, delta: { content } }] });

export async function startChatEndpoint(): Promise<ChatEndpoint> {
  const queued: Behaviour[] = [];
  const requests: ChatEndpoint["requests"] = [];
  const open = new Set<ServerResponse>();
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404).end();
      return;
    }
    requests.push({ authorization: req.headers.authorization, body: JSON.parse(raw) });
    const behaviour = queued.shift() ?? { kind: "stream", chunks: ["ok"] };
    if (behaviour.kind === "silent") {
      open.add(res);
      return;
    }
    if (behaviour.kind === "error") {
      res.writeHead(behaviour.status, { "content-type": "application/json" });
      res.end(JSON.stringify(behaviour.body));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const chunk of behaviour.chunks) res.write(delta(chunk));
    if (behaviour.kind === "stall") {
      open.add(res);
      return;
    }
    if (behaviour.kind === "cut") {
      // Once the chunks are on their way: the connection dropped, no end of the stream.
      res.socket?.end(() => res.socket?.destroy());
      return;
    }
    if (behaviour.usage !== undefined)
      res.write(event({ choices: [], usage: { total_tokens: behaviour.usage } }));
    res.end("data: [DONE]\n\n");
  };
  const server = createServer((req, res) => void serve(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    queue: (...behaviours) => queued.push(...behaviours),
    requests,
    stop: async () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
