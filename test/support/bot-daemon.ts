/**
 * Runs bots in a real Daemon against a sandbox (config through the real loader, state in a temp
 * directory, logs captured), with validated settings, and builds contexts the way the runtime
 * does (`new LazyBaseContext(runtime.contextDeps(), …)`) so tests can call helpers directly.
 */
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import type { Daemon } from "../../src/daemon/daemon.ts";
import { type BaseContext, LazyBaseContext } from "../../src/pipeline/context.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type InProcessOptions, startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";

export interface TestBot {
  email: string;
  // biome-ignore lint/suspicious/noExplicitAny: any bot definition, whatever its settings schema
  definition: BotDefinition<any, any>;
  /** Raw settings, validated by the definition's schema like the loader does. */
  settings?: unknown;
  /** Extra YAML lines for the bot's config block, e.g. "long_messages: reject". */
  extra?: string;
}

export interface BotDaemon {
  daemon: Daemon;
  logs: Record<string, unknown>[];
  stateDir: string;
  /** A fresh context of bot `name` (the first bot by default), as a cron job would get. */
  context(name?: string): BaseContext<unknown>;
  /** Log lines whose msg contains `text`. */
  logged(text: string): Record<string, unknown>[];
  /** Every log line as written (JSON lines). */
  logText(): string;
  stop(): Promise<void>;
}

export async function startBots(
  sandbox: Sandbox,
  bots: Record<string, TestBot>,
  options: Pick<InProcessOptions, "stateDir" | "clock"> = {},
): Promise<BotDaemon> {
  const running = await startInProcessDaemon(sandbox, bots, options);
  const { daemon, report } = running;
  if (report.started.length !== Object.keys(bots).length) {
    await running.stop();
    throw new Error(`bots failed to start: ${JSON.stringify(report)}`);
  }
  const first = Object.keys(bots)[0]!;
  return {
    ...running,
    context(name = first) {
      const runtime = daemon.bots.find((b) => b.name === name)!;
      return new LazyBaseContext(runtime.contextDeps(), new AbortController().signal, "on-start", {
        test: true,
      });
    },
  };
}

/** Requests the sandbox received since `from` (an index into control.requests), as "METHOD /path". */
export function requestsSince(sandbox: Sandbox, from: number): string[] {
  return sandbox.control.requests.slice(from).map((r) => `${r.method} ${r.path}`);
}
