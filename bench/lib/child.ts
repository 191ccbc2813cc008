/**
 * Forked helper processes (the event server, the sandbox host): TypeScript through jiti, messages
 * over IPC. Servers run in their own process so the benchmark measures the client's CPU only.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface Child {
  process: ChildProcess;
  /** The child's "ready" message. */
  ready: Record<string, unknown>;
  /** Send a request `{ id, op, ...args }` and resolve with the child's reply `{ id, result | error }`. */
  call<T = unknown>(op: string, args?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

let nextId = 0;

/** Fork `file` (relative to bench/) with jiti, and wait for its `{ type: "ready" }` message. */
export async function forkChild(file: string, args: string[] = []): Promise<Child> {
  const path = fileURLToPath(new URL(`../${file}`, import.meta.url));
  const child = fork(path, args, {
    execArgv: ["--import", "jiti/register"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`${file} exited with code ${code} before it was ready`)));
    child.on("message", (raw) => {
      const msg = raw as { type?: string; id?: number; result?: unknown; error?: string };
      if (msg.type === "ready") resolve(msg as Record<string, unknown>);
      else if (msg.id !== undefined) {
        const p = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error !== undefined) p?.reject(new Error(msg.error));
        else p?.resolve(msg.result);
      }
    });
  });
  child.removeAllListeners("exit");
  return {
    process: child,
    ready,
    call: <T>(op: string, callArgs: Record<string, unknown> = {}) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, op, ...callArgs });
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
  };
}
