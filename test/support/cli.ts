/**
 * Runs the built CLI (`node dist/cli/main.js …`) as a child process, the way a user or a service
 * manager does: real argv, real environment, real signals, JSON log lines on stdout.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
export const cliPath = path.join(repoRoot, "dist/cli/main.js");

/** Fail early, with the fix, when the CLI was never built (`npm test` builds it first). */
export function assertBuilt(): void {
  if (!existsSync(cliPath)) {
    throw new Error(`${cliPath} is missing: run "npm run build" first ("npm test" builds before testing)`);
  }
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CliProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** Every JSON log line written so far (lines that are not JSON are skipped). */
  logs(): Record<string, unknown>[];
  readonly exited: Promise<Exit>;
  /** Resolves with the first log line matching `predicate`; rejects if the process exits first. */
  waitForLog(
    predicate: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  kill(signal: NodeJS.Signals): void;
}

const running = new Set<ChildProcess>();

/** SIGKILL every child still running (call in afterEach so a failed test leaves no daemon behind). */
export async function killAll(): Promise<void> {
  const waits = [...running].map(
    (child) =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
  );
  await Promise.all(waits);
}

/** The environment a child gets: PATH and HOME, plus `env` (never the test runner's own variables). */
export function childEnv(env: Record<string, string> = {}): Record<string, string> {
  const base: Record<string, string> = {};
  for (const key of ["PATH", "HOME", "TMPDIR", "SYSTEMROOT"]) {
    const value = process.env[key];
    if (value !== undefined) base[key] = value;
  }
  return { ...base, ...env };
}

/**
 * Start the CLI with `args`.
 *
 * @example
 * ```ts
 * const daemon = spawnCli(["run", "--config", file], { env: { KEY_ECHO: key } });
 * await daemon.waitForLog((l) => l.msg === "daemon started");
 * ```
 */
export function spawnCli(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): CliProcess {
  const child = spawn(process.execPath, [cliPath, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: childEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let out = "";
  let err = "";
  const parsed: Record<string, unknown>[] = [];
  let partial = "";
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const listener of [...listeners]) listener();
  };
  child.stdout!.setEncoding("utf8");
  child.stderr!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    out += chunk;
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.startsWith("{")) continue;
      try {
        parsed.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // Not a log line.
      }
    }
    changed();
  });
  child.stderr!.on("data", (chunk: string) => {
    err += chunk;
  });
  let done = false;
  const exited = new Promise<Exit>((resolve) => {
    // "close", not "exit": it comes once the output pipes are read to their end, so the caller
    // sees everything the process wrote ("exit" can come first, with the last lines still unread).
    child.once("close", (code, signal) => {
      running.delete(child);
      // Before the listeners look: a wait for a line that never came ends now, not at its timeout.
      done = true;
      resolve({ code, signal });
      changed();
    });
  });
  return {
    child,
    pid: child.pid ?? -1,
    stdout: () => out,
    stderr: () => err,
    logs: () => parsed,
    exited,
    kill: (signal) => {
      child.kill(signal);
    },
    waitForLog(predicate, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = parsed.find(predicate);
          if (hit) {
            finish();
            resolve(hit);
          } else if (done) {
            finish();
            reject(
              new Error(`the process exited before the expected log line.\nstdout:\n${out}\nstderr:\n${err}`),
            );
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`no matching log line within ${timeoutMs} ms.\nstdout:\n${out}\nstderr:\n${err}`));
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
  };
}

/** Run the CLI to completion and return its exit code and output. */
export async function runCli(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawnCli(args, options);
  const { code } = await proc.exited;
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

/** True when `text` shows a JavaScript stack trace (a user mistake must never print one). */
export function hasStackTrace(text: string): boolean {
  return /^\s+at .+[:(]/m.test(text);
}
