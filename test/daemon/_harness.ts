/**
 * Runs a daemon in-process against a fresh sandbox: bots given as definitions, config written to
 * a temp file and loaded through the real loader, state in a temp directory.
 */
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import type { Daemon } from "../../src/daemon/daemon.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";

export interface HarnessBot {
  email: string;
  apiKey?: string;
  definition: BotDefinition<never, never>;
  extra?: string;
}

export interface Harness {
  daemon: Daemon;
  logs: Record<string, unknown>[];
  stateDir: string;
  stop(): Promise<void>;
}

export function startHarness(
  sandbox: Sandbox,
  bots: Record<string, HarnessBot>,
  options: { stateDir?: string; global?: string } = {},
): Promise<Harness> {
  return startInProcessDaemon(sandbox, bots, options);
}
