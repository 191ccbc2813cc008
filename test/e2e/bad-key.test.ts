/**
 * Credentials the server rejects: a bot with a wrong key stops alone, loudly, while the others go
 * on; when every bot's key is wrong, `bothost run` exits with code 3. No key is ever printed.
 */
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { spawnCli } from "../support/cli.ts";
import {
  botEmail,
  type E2eConfig,
  expectExactlyOnce,
  expectNoSecrets,
  orgWithBots,
  send,
  startDaemon,
  startE2eSandbox,
  useE2eCleanup,
  waitForAnswers,
  writeConfig,
} from "../support/e2e-daemon.ts";

const WRONG_KEY = "WrongKey0123456789abcdefWrongKey";

let sandbox: Sandbox | undefined;
let config: E2eConfig | undefined;

useE2eCleanup();

describe("a rejected API key", () => {
  it("stops that bot alone, with an error line naming it; the others keep handling messages", async () => {
    sandbox = await startE2eSandbox(orgWithBots(2));
    config = await writeConfig(sandbox, {
      good: { email: botEmail(0) },
      broken: { email: botEmail(1), apiKey: WRONG_KEY },
    });
    const daemon = await startDaemon(config);
    const failure = await daemon.waitForLog((l) => l.msg === "authentication failed; this bot is stopped");
    expect(failure).toMatchObject({ level: 50, bot: "broken" });
    expect(String(failure.err)).toContain("rejected the credentials of bot1@sandbox.example");
    expect(daemon.logs().find((l) => l.msg === "daemon started")).toMatchObject({
      started: 1,
      authFailed: ["broken"],
    });

    const ids = [send(sandbox, "task 1", "c0"), send(sandbox, "task 2", "c0")];
    await waitForAnswers(sandbox, ids);
    expectExactlyOnce(sandbox, ids);
    expect(daemon.child.exitCode).toBeNull();
    expect(sandbox.control.queues().map((q) => q.email)).toEqual([botEmail(0)]);

    daemon.kill("SIGTERM");
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expectNoSecrets(daemon, [...config.secrets, WRONG_KEY]);
  });

  it("exits with code 3 when every bot's key is rejected", async () => {
    sandbox = await startE2eSandbox(orgWithBots(2));
    config = await writeConfig(sandbox, {
      one: { email: botEmail(0), apiKey: WRONG_KEY },
      two: { email: botEmail(1), apiKey: `${WRONG_KEY}2` },
    });
    const daemon = spawnCli(["run", "--config", config.file], { env: config.env });
    expect(await daemon.exited).toEqual({ code: 3, signal: null });
    const failed = daemon.logs().filter((l) => l.msg === "authentication failed; this bot is stopped");
    expect(failed.map((l) => l.bot).sort()).toEqual(["one", "two"]);
    expect(daemon.stderr()).toMatch(
      /^bothost: no bot could start, so the daemon stops:\n {2}one: .*credentials.*\n {2}two: .*\n$/,
    );
    // Nothing runs to reload: the advice is to start it again.
    expect(daemon.stderr()).not.toContain("reload");
    expect(daemon.stderr()).toContain("then start the daemon again");
    expect(sandbox.control.queues()).toEqual([]);
    expectNoSecrets(daemon, [...config.secrets, WRONG_KEY, `${WRONG_KEY}2`]);
  });
});
