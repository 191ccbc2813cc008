/**
 * The client reads at most 64 MiB of one answer: a server (or whatever the URL points at) that
 * sends more gets the call refused with an error naming it, not the process's memory filled.
 */
import { createServer, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/api/create-client.ts";
import { ResponseTooLargeError } from "../../src/api/errors.ts";
import { MAX_RESPONSE_BYTES } from "../../src/api/request-text.ts";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A server answering every request with a JSON body that never ends; resolves its URL. */
async function endless(): Promise<{ url: string; sent: () => number }> {
  let sent = 0;
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  server = createServer((_req, res) => {
    res.setHeader("content-type", "application/json");
    res.write('{"result":"success","msg":"","pad":"');
    const more = () => {
      while (!res.destroyed && sent < 4 * MAX_RESPONSE_BYTES) {
        sent += chunk.length;
        if (!res.write(chunk)) {
          res.once("drain", more);
          return;
        }
      }
      res.end('"}');
    };
    more();
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, sent: () => sent };
}

describe("an answer over the client's cap", () => {
  it("refuses the call with RESPONSE_TOO_LARGE naming it, after reading no more than the cap", async () => {
    const { url, sent } = await endless();
    const client = createClient({
      url,
      email: "cap-bot@x.example",
      apiKey: "0123456789abcdef",
      retry: false,
    });
    const err = await client.request("GET", "/users/me").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect(err).toMatchObject({ code: "RESPONSE_TOO_LARGE" });
    expect((err as Error).message).toMatch(
      /^GET \/users\/me: the server's answer is larger than 67108864 bytes/,
    );
    // The server stopped well before it would have: the client closed the connection.
    expect(sent()).toBeLessThan(4 * MAX_RESPONSE_BYTES);
  }, 60_000);
});
