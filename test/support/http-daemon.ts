/**
 * A daemon with its HTTP listener, in-process, against a sandbox: bots given as definitions (with
 * settings), config written as YAML and loaded through the real loader, logs captured as JSON.
 */
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import type { Daemon } from "../../src/daemon/daemon.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import type { StateBackend } from "../../src/state/state-store.ts";
import { startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import type { Clock } from "../../src/time/clock.ts";
import { freePort } from "./free-port.ts";

export { freePort };

export interface TestBot {
  email: string;
  definition: BotDefinition<never, never>;
  settings?: unknown;
  /** More YAML for the bot's config entry (e.g. its outgoing_webhook). */
  extra?: string;
}

export interface RunningDaemon {
  daemon: Daemon;
  /** The HTTP listener's base URL. */
  url: string;
  /** Every log line, parsed. */
  logs: Record<string, unknown>[];
  /** Raw log text, to check that no secret was ever written. */
  logText(): string;
  stop(): Promise<void>;
}

export async function startDaemon(
  sandbox: Sandbox,
  bots: Record<string, TestBot>,
  /** `stateDir`: keep the state there, for a restart on it (default: a temp folder removed at stop). */
  options: {
    port?: number;
    env?: Record<string, string>;
    http?: string;
    stateDir?: string;
    clock?: Clock;
    /** Where the log lines go (readable before the start resolves). */
    logs?: Record<string, unknown>[];
    /** Given the daemon before it starts (to stop it during its start). */
    created?: (daemon: Daemon) => void;
    /** The state store (closed at stop); default a FileStore in `stateDir`. */
    store?: StateBackend;
  } = {},
): Promise<RunningDaemon> {
  const http = `http:\n  listen: 127.0.0.1:${options.port ?? 0}${options.http ? `\n${options.http.replace(/^/gm, "  ")}` : ""}`;
  const running = await startInProcessDaemon(sandbox, bots, {
    global: http,
    ...(options.env ? { env: options.env } : {}),
    ...(options.stateDir ? { stateDir: options.stateDir } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.logs ? { logs: options.logs } : {}),
    ...(options.created ? { created: options.created } : {}),
    ...(options.store ? { store: options.store } : {}),
  });
  return { ...running, url: running.daemon.http!.url! };
}
