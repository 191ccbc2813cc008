/**
 * The admin commands and `backtest` load only what they use: `--help` and a usage error load no
 * package at all, and `bothost status` not the bot runtime's (pino). Seen from a real process through
 * NODE_DEBUG=module, which names on stderr every CommonJS file Node loads (undici and pino are
 * CommonJS; yaml is in bothost's bundle).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, runCli } from "../support/cli.ts";

beforeAll(assertBuilt);

const traced = { env: { NODE_DEBUG: "module" } };

/** The packages whose files the process loaded, from NODE_DEBUG=module's lines. */
function packagesLoaded(stderr: string): string[] {
  const names = [...stderr.matchAll(/load "[^"]*\/node_modules\/((?:@[^/"]+\/)?[^/"]+)\//g)].map(
    (m) => m[1]!,
  );
  return [...new Set(names)].sort();
}

const COMMANDS = ["status", "dialogs", "failed", "reload", "commands", "backtest"];

/** Each case runs a CLI process; a loaded 2-core machine needs more than vitest's default. */
describe("the commands' startup", { timeout: 60_000 }, () => {
  it("--help prints the help and loads no package", async () => {
    for (const command of COMMANDS) {
      const { code, stdout, stderr } = await runCli([command, "--help"], traced);
      expect(code, command).toBe(0);
      expect(stdout, command).toMatch(new RegExp(`^Usage: bothost ${command} `));
      expect(packagesLoaded(stderr), command).toEqual([]);
    }
  });

  it("a usage error says so (exit 2) and loads no package", async () => {
    for (const command of COMMANDS) {
      const { code, stdout, stderr } = await runCli([command, "--bogus"], traced);
      expect(code, command).toBe(2);
      expect(stdout, command).toBe("");
      expect(stderr, command).toContain(
        `bothost ${command}: Unknown option '--bogus'. Run "bothost ${command} --help" for the options.\n`,
      );
      expect(packagesLoaded(stderr), command).toEqual([]);
    }
  });

  it("status with no daemon answering reads the config, and loads no logger", async () => {
    const { code, stderr } = await runCli(["status", "--config", "bots/demo/bothost.yaml"], traced);
    expect(code).toBe(1);
    expect(stderr).toContain("no daemon answers");
    // What only the config says: its state folder (the admin socket's) and that it has no http:.
    expect(stderr).toContain("bots/demo/.bothost/admin.sock");
    expect(stderr).toContain("this config has no http:");
    expect(packagesLoaded(stderr)).not.toContain("pino");
  });
});
