/**
 * `bothost reload` reaching the daemon through its HTTP listener with a wrong `http.admin_token`:
 * the daemon refused the request (HTTP 401), not the config. The CLI says so as `status` does
 * (`DAEMON_REFUSED`, exit 1), names no refused config, and prints neither token. The daemon is a
 * real one on the sandbox, its listener on a public interface with a token; the CLI's config has
 * another state directory, so no admin socket answers and the listener is asked.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { assertBuilt, hasStackTrace, runCli } from "../support/cli.ts";
import { freePort } from "../support/free-port.ts";

const TOKEN = "right-admin-token-0123456789abcdef";
const WRONG = "wrong-admin-token-0123456789abcdef";
let dir: string;
let sandbox: Sandbox;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), "bothost-reload-token-"));
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  sandbox.control.createUser({
    email: "echo-bot@sandbox.example",
    full_name: "Echo",
    bot: "generic",
    owner: "owner@sandbox.example",
  });
});
afterAll(async () => {
  await sandbox?.stop();
  await rm(dir, { recursive: true, force: true });
});

it("a wrong admin_token is a refused request, exit 1, not a refused config", async () => {
  const port = await freePort();
  const running = await startInProcessDaemon(
    sandbox,
    { echo: { email: "echo-bot@sandbox.example", definition: defineBot({ setup() {} }) } },
    { global: `http:\n  listen: 0.0.0.0:${port}\n  admin_token: ${TOKEN}` },
  );
  try {
    const file = join(dir, "bothost.yaml");
    await writeFile(
      file,
      `server:\n  url: ${sandbox.url}\nstate:\n  path: ${join(dir, "state")}\n` +
        `http:\n  listen: 0.0.0.0:${port}\n  admin_token: \${ADMIN_TOKEN}\n` +
        "bots:\n  echo:\n    module: ./echo.ts\n    email: echo-bot@sandbox.example\n    api_key: unused-key-0123456789\n",
    );
    const env = { ADMIN_TOKEN: WRONG };
    const plain = await runCli(["reload", "-c", file], { env });
    expect(plain.code).toBe(1);
    expect(plain.stdout).toBe("");
    expect(plain.stderr).not.toMatch(/refused the new config/);
    expect(plain.stderr).toMatch(/HTTP 401.*admin_token.*\[DAEMON_REFUSED\]/);
    // A token was given: the refusal says it is not the daemon's, not only that one is needed.
    expect(plain.stderr).toContain("http.admin_token is missing or not the daemon's");
    expect(hasStackTrace(plain.stderr)).toBe(false);
    const json = await runCli(["reload", "--json", "-c", file], { env });
    expect([json.code, json.stdout, json.stderr]).toEqual([1, "", plain.stderr]);
    for (const out of [plain, json]) {
      expect(`${out.stdout}${out.stderr}`).not.toContain(WRONG);
      expect(`${out.stdout}${out.stderr}`).not.toContain(TOKEN);
    }
    // The same config with the right token reaches the daemon.
    const right = await runCli(["status", "--json", "-c", file], { env: { ADMIN_TOKEN: TOKEN } });
    expect(right.code).toBe(0);
    expect(JSON.parse(right.stdout)).toMatchObject({ bots: [{ name: "echo" }] });
  } finally {
    await running.stop();
  }
});
