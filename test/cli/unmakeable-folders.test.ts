/**
 * A folder whose last level the file system refuses with ENOENT though its parent exists (a path
 * under /proc): Node's recursive mkdir loops there forever. Each command that makes folders says
 * what it could not make and exits, or goes on without the folder when it is only a cache.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, hasStackTrace, killAll, repoRoot, runCli } from "../support/cli.ts";

const unmakeable = "/proc/bothost-no-such-folder/sub";

describe.skipIf(!existsSync("/proc/self"))("folders the file system will not make", () => {
  beforeAll(() => assertBuilt());
  // A case that fails hangs its command: killed, not left spinning after the test.
  afterEach(killAll);

  it("bothost sandbox --zuliprc-dir names the folder and exits 2", async () => {
    const { code, stderr } = await runCli(["sandbox", "--port", "0", "--zuliprc-dir", unmakeable]);
    expect(code).toBe(2);
    expect(stderr).toContain(`cannot write the zuliprc files to ${unmakeable}: ENOENT`);
    expect(hasStackTrace(stderr)).toBe(false);
  }, 30_000);

  it("bothost init names the folder and exits 1", async () => {
    const { code, stderr } = await runCli(["init", unmakeable]);
    expect(code).toBe(1);
    expect(stderr).toContain(`bothost init: cannot write the project in ${unmakeable}: ENOENT`);
  }, 30_000);

  it("a cache home that cannot be made: bothost check goes on without the cache", async () => {
    const file = path.join(repoRoot, "bots/demo/bothost.yaml");
    const { code, stdout, stderr } = await runCli(["check", "-c", file], {
      env: { XDG_CACHE_HOME: unmakeable },
    });
    expect(stderr).toBe("");
    expect(stdout).toContain("All 4 bots are ready.");
    expect(code).toBe(0);
  }, 30_000);
});
