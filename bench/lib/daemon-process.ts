/**
 * `bothost run` as a subprocess (node dist/cli/main.js run --config FILE), with its JSON log
 * lines parsed as they come: what the soak and the scale benchmark drive and watch.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const cli = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

export interface DaemonBotConfig {
  name: string;
  module: string;
  email: string;
  apiKey: string;
  settings?: Record<string, unknown>;
  /** The account's rules where the server's were changed for it (the bot's `rate_limit`). */
  rateLimit?: { perMinute: number; perHour: number };
  /** The queue sees every public channel's messages. */
  allPublicStreams?: boolean;
}

/** Write a config for a server URL and bots; keys are the sandbox's own fake credentials. */
export async function writeDaemonConfig(
  file: string,
  options: {
    url: string;
    /** The state: a folder (the embedded store), or a Redis URL and key prefix. */
    state: { path: string } | { redis: string; prefix: string };
    bots: DaemonBotConfig[];
    extra?: string;
    logLevel?: string;
  },
): Promise<void> {
  const { state } = options;
  const lines = [
    `server:\n  url: ${options.url}`,
    "path" in state
      ? `state:\n  path: ${JSON.stringify(state.path)}`
      : `state:\n  redis: ${state.redis}\n  prefix: ${state.prefix}`,
    `log:\n  level: ${options.logLevel ?? "info"}\n  pretty: false`,
    options.extra ?? "",
    "bots:",
  ];
  for (const bot of options.bots) {
    lines.push(
      `  ${bot.name}:\n    module: ${JSON.stringify(bot.module)}\n    email: ${bot.email}\n    api_key: ${bot.apiKey}`,
    );
    if (bot.settings) lines.push(`    settings: ${JSON.stringify(bot.settings)}`);
    if (bot.allPublicStreams) lines.push("    all_public_streams: true");
    if (bot.rateLimit)
      lines.push(
        `    rate_limit: { per_minute: ${bot.rateLimit.perMinute}, per_hour: ${bot.rateLimit.perHour} }`,
      );
  }
  await writeFile(file, `${lines.join("\n")}\n`, { mode: 0o600 });
}

export interface DaemonProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Every JSON log line so far (non-JSON lines are kept as { raw }). */
  readonly lines: Record<string, unknown>[];
  /** Resolves with the first line (from now on or already seen) that matches. */
  waitForLine(
    match: (line: Record<string, unknown>) => boolean,
    timeoutMs: number,
  ): Promise<Record<string, unknown>>;
  /** Resolves with the exit code or signal. */
  readonly exited: Promise<number | string>;
}

export function spawnDaemon(
  configFile: string,
  onLine?: (line: Record<string, unknown>) => void,
  nodeFlags: string[] = [],
  /** Another build's executable (…/dist/cli/main.js) instead of this checkout's. */
  cliPath = cli,
): DaemonProcess {
  const child = spawn(process.execPath, [...nodeFlags, cliPath, "run", "--config", configFile], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<(line: Record<string, unknown>) => void>();
  let buffered = "";
  const take = (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let nl = buffered.indexOf("\n");
    while (nl >= 0) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      nl = buffered.indexOf("\n");
      if (!text.trim()) continue;
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        line = { raw: text };
      }
      lines.push(line);
      onLine?.(line);
      for (const w of waiters) w(line);
    }
  };
  child.stdout?.on("data", take);
  child.stderr?.on("data", take);
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
  return {
    child,
    pid: child.pid ?? -1,
    lines,
    exited,
    waitForLine: (match, timeoutMs) =>
      new Promise((resolve, reject) => {
        const seen = lines.find(match);
        if (seen) return resolve(seen);
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching daemon log line within ${timeoutMs} ms`));
        }, timeoutMs);
        const check = (line: Record<string, unknown>) => {
          if (!match(line)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(line);
        };
        waiters.add(check);
        void exited.then((code) => {
          if (!waiters.has(check)) return;
          clearTimeout(timer);
          waiters.delete(check);
          reject(new Error(`the daemon exited (${code}) before a matching log line`));
        });
      }),
  };
}
