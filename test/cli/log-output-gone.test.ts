/**
 * A daemon whose log output is gone keeps running: a full disk (/dev/full answers ENOSPC), a
 * closed pipe (EPIPE) or a terminal that hung up (EIO) only loses the lines. It answers messages
 * and stops on SIGTERM with exit 0, in JSON and in readable form.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { childEnv, cliPath, repoRoot } from "../support/cli.ts";
import {
  botEmail,
  orgWithBots,
  send,
  startE2eSandbox,
  useE2eCleanup,
  waitForAnswers,
  writeConfig,
} from "../support/e2e-daemon.ts";

useE2eCleanup();

const hasDevFull = existsSync("/dev/full");
if (!hasDevFull) console.log("log-output-gone: skipping the full-disk cases, this system has no /dev/full");

async function runWithOutput(output: "full disk" | "closed pipe", pretty: boolean) {
  const sandbox = await startE2eSandbox(orgWithBots(1));
  const config = await writeConfig(sandbox, { replier: { email: botEmail(0) } });
  // Debug level: a line for each event, each one failing.
  if (pretty)
    await writeFile(
      config.file,
      (await readFile(config.file, "utf8")).replace("pretty: false", "pretty: true"),
    );
  const full = output === "full disk" ? openSync("/dev/full", "w") : undefined;
  const child = spawn(process.execPath, [cliPath, "run", "--config", config.file], {
    cwd: repoRoot,
    env: childEnv(config.env),
    stdio: ["ignore", full ?? "pipe", "pipe"],
  });
  if (full !== undefined) closeSync(full);
  // The reader goes away before the daemon writes its first line.
  child.stdout?.destroy();
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    // Its first start replays nothing: the messages go out once its queue is registered.
    await expect
      .poll(() => sandbox.control.queues().some((q) => q.email === botEmail(0)), { timeout: 15_000 })
      .toBe(true)
      .catch((err: unknown) => {
        throw new Error(`the daemon did not register (stderr: ${stderr})`, { cause: err });
      });
    const ids = [send(sandbox, "task 1"), send(sandbox, "task 2")];
    await waitForAnswers(sandbox, ids);
    child.kill("SIGTERM");
    const code = await Promise.race([
      exited,
      new Promise((r) => setTimeout(() => r("still running"), 15_000)),
    ]);
    return { code, stderr };
  } finally {
    child.kill("SIGKILL");
    await config.cleanup();
  }
}

describe("a daemon whose log output is gone", () => {
  it.runIf(hasDevFull).each([false, true])(
    "on a full disk (pretty: %s) answers messages and stops on SIGTERM with exit 0",
    async (pretty) => {
      const { code, stderr } = await runWithOutput("full disk", pretty);
      expect(code).toBe(0);
      expect(stderr).toBe("");
    },
  );

  it("on a closed pipe answers messages and stops on SIGTERM with exit 0", async () => {
    const { code, stderr } = await runWithOutput("closed pipe", false);
    expect(code).toBe(0);
    expect(stderr).toBe("");
  });
});
