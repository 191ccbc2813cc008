/**
 * The embedded sandbox's port in use (`server.sandbox.port`): `bothost run` and `bothost check`
 * say so in one line naming the address and what to change, exit 1, with no stack trace.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { assertBuilt, hasStackTrace, repoRoot, runCli } from "../support/cli.ts";

it.each([["run"], ["check"]])("%s on an embedded sandbox whose port is in use", async (command) => {
  assertBuilt();
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
  const port = (taken.address() as { port: number }).port;
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-sandbox-port-"));
  try {
    const file = path.join(dir, "bothost.yaml");
    const module = path.join(repoRoot, "bots/echo.ts");
    await writeFile(
      file,
      `server:\n  url: sandbox\n  sandbox:\n    port: ${port}\nbots:\n  echo:\n    module: ${module}\n    email: echo-bot@sandbox.example\n    api_key: sandbox\n`,
    );
    const { code, stderr } = await runCli([command, "-c", file]);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `the sandbox cannot listen on 127.0.0.1:${port}: the port is in use: choose another port (bothost sandbox --port, or server.sandbox.port in the config; 0 picks a free one)`,
    );
    expect(hasStackTrace(stderr)).toBe(false);
  } finally {
    await new Promise((r) => taken.close(r));
    await rm(dir, { recursive: true, force: true });
  }
});
