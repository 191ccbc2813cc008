/**
 * A daemon that takes a command's request and closes the connection before answering (it stopped
 * or died meanwhile) is told apart from one that is not there: DAEMON_CLOSED, no other channel
 * tried, since it may have acted on the request.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { daemonClient } from "../../src/cli/daemon-client.ts";

let server: Server | undefined;
let dir: string | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("a request taken, then the connection closed before an answer: DAEMON_CLOSED, the listener not tried", async () => {
  dir = await mkdtemp(path.join(tmpdir(), "bothost-closed-"));
  const socket = path.join(dir, "admin.sock");
  let requests = 0;
  // Reads the request's first bytes, then goes away without a word, as a daemon killed mid-reload.
  server = createServer((conn) =>
    conn.once("data", () => {
      requests++;
      conn.destroy();
    }),
  );
  await new Promise<void>((resolve) => server!.listen(socket, resolve));
  // A listener nobody serves: tried, it would be "connection refused", and the message would say so.
  const client = daemonClient({ socket, http: { listen: "127.0.0.1:9" } as never, problems: [] });
  const failure = client.call("POST", "/admin/reload", {});
  await expect(failure).rejects.toMatchObject({ code: "DAEMON_CLOSED" });
  await expect(failure).rejects.toThrow(
    `the daemon took the request on the admin socket ${socket} but closed the connection before answering`,
  );
  expect(requests).toBe(1);
  await client.close();
});
