/**
 * `bothost reload` against a daemon that fails the request (HTTP 5xx) instead of answering it: that
 * is the daemon failing, not the config refused, so the CLI says the daemon failed, names no
 * refused config, and exits 1 (as when no daemon answers), not 2. The daemon here is a test
 * server on port 0 answering the admin route with 500; the CLI is the real one.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, expect, it } from "vitest";
import { assertBuilt, runCli } from "../support/cli.ts";

let dir: string | undefined;
let server: Server | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  if (dir) await rm(dir, { recursive: true, force: true });
  server = dir = undefined;
});

it.each([
  [500, "internal error"],
  [503, "Redis at redis://127.0.0.1:6379/0 is not answering"],
])("HTTP %i from /admin/reload: the daemon failed, exit 1, no refused config", async (status, error) => {
  const s = createServer((req, res) => {
    const reload = req.method === "POST" && req.url === "/admin/reload";
    res.writeHead(reload ? status : 404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: reload ? error : `no route for ${req.url}` }));
  });
  server = s;
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  dir = await mkdtemp(join(tmpdir(), "bothost-reload-failed-"));
  const file = join(dir, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: http://127.0.0.1:9\nstate:\n  path: ${join(dir, "state")}\nhttp:\n  listen: 127.0.0.1:${port}\n` +
      "bots:\n  echo:\n    module: ./echo.ts\n    email: e@x.example\n    api_key: k\n",
  );

  const plain = await runCli(["reload", "-c", file]);
  expect(plain.code).toBe(1);
  expect(plain.stdout).toBe("");
  expect(plain.stderr).not.toMatch(/refused/);
  expect(plain.stderr).toBe(
    `bothost reload: the daemon failed the reload (HTTP ${status}): ${error}. This is no verdict on the new config: the daemon's log says what it applied, and \`bothost status\` what runs now.\n`,
  );
  const json = await runCli(["reload", "--json", "-c", file]);
  expect([json.code, json.stdout]).toEqual([1, ""]);
  expect(json.stderr).toBe(plain.stderr);
});
