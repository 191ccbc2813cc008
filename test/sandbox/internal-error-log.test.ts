import { request } from "node:http";
import { afterEach, expect, test, vi } from "vitest";
import { startSandbox } from "../../src/testing.ts";
import { BOT, basicAuth } from "../support/sandbox/fixture.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

/** The sandbox's stderr lines while `run` runs. */
async function stderrOf(run: () => Promise<void>): Promise<string> {
  const lines: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => lines.push(String(chunk)) > 0);
  await run();
  vi.restoreAllMocks();
  return lines.join("");
}

test("a request still sending its body when the sandbox stops is dropped quietly", async () => {
  const sandbox = await startSandbox();
  const url = new URL(sandbox.url);
  const logged = await stderrOf(async () => {
    // A bot answering an outgoing webhook posts back as the sandbox stops, its body not yet sent.
    // With `Expect: 100-continue` the server answers "continue" once it hands the request to its
    // handler, which then waits for the body.
    const req = request({
      host: url.hostname,
      port: url.port,
      method: "POST",
      path: "/api/v1/messages",
      headers: {
        "content-length": "200",
        "content-type": "application/x-www-form-urlencoded",
        expect: "100-continue",
      },
    });
    const gone = new Promise((resolve) => req.on("error", resolve));
    await new Promise((resolve) => req.on("continue", resolve));
    req.write("type=stream&to=general");
    await sandbox.stop();
    await gone;
    await new Promise((r) => setImmediate(r));
  });
  expect(logged).not.toContain("internal error");
});

test("an internal error is still logged and answered 500", async () => {
  const sandbox = await startSandbox({
    onResponse: () => {
      throw new Error("hook broke");
    },
  });
  try {
    const logged = await stderrOf(async () => {
      const reply = await fetch(`${sandbox.url}/api/v1/users/me`, {
        headers: { authorization: basicAuth(BOT, sandbox.control.apiKeyOf(BOT)) },
      });
      expect(reply.status).toBe(500);
    });
    expect(logged).toContain("sandbox: internal error: Error: hook broke");
  } finally {
    await sandbox.stop();
  }
});
