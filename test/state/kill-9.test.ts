/**
 * A real crash: a child process writes to a FileStore without pause and is killed with SIGKILL
 * at a random moment (mid-append, mid-fsync or mid-compaction). After each kill the store must reopen uncorrupted, hold every write the child had
 * seen flushed, and hold the state after some prefix of the child's writes.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { FileStore } from "../../src/state/file-store.ts";
import { BIG_EVERY, bigValue, expectedValue } from "./fixtures/writer-values.ts";
import { test } from "./support.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const child = fileURLToPath(new URL("./fixtures/writer-child.ts", import.meta.url));
const ROUNDS = 6;
/** Alternate a tiny compaction threshold (kills land mid-compaction) with a large one (kills land
 * mid-append of a multi-megabyte record and leave a torn last line). */
const compactAfter = (round: number) => (round % 2 === 0 ? "16384" : "8000000");

/** Run the writer until it reported `flushes` flushes plus a random extra moment, then SIGKILL it. */
async function runAndKill(dir: string, flushes: number, compactAfterBytes: string): Promise<number> {
  const proc = spawn(process.execPath, ["--import", "jiti/register", child, dir, compactAfterBytes], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    proc.on("exit", (_code, signal) => resolve(signal)),
  );
  let lastFlushed = -1;
  let seen = 0;
  try {
    for await (const line of createInterface({ input: proc.stdout })) {
      const match = /^flushed (\d+)$/.exec(line);
      if (match) {
        lastFlushed = Number(match[1]);
        if (++seen === flushes) break;
      }
    }
    // Let it run on for a random moment so the kill lands anywhere in the write/flush/compact cycle.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 15));
  } finally {
    proc.kill("SIGKILL");
  }
  expect(await exited, `writer child failed: ${stderr}`).toBe("SIGKILL");
  return lastFlushed;
}

/** The largest i ≤ n with i ≡ j (mod 50), or undefined. */
function lastWrite(n: number, j: number): number | undefined {
  if (n < j) return undefined;
  return n - ((n - j) % 50);
}

test("survives SIGKILL at random moments without corruption or losing flushed writes", async ({ dir }) => {
  for (let round = 0; round < ROUNDS; round++) {
    const lastFlushed = await runAndKill(dir, 3 + Math.floor(Math.random() * 40), compactAfter(round));
    const store = await FileStore.open(dir, { autoFlushMs: 0 });
    const counter = (await store.get("counter")) as number;
    expect(counter).toBeGreaterThanOrEqual(lastFlushed);
    // A prefix of the writes: each k<j> holds its last write up to counter, or counter + 1
    // (the write of k for counter + 1 comes before the counter write itself).
    for (let j = 0; j < 50; j++) {
      const value = await store.get(`k${j}`);
      const candidates = [lastWrite(counter, j), lastWrite(counter + 1, j)].map((i) =>
        i === undefined ? undefined : expectedValue(i),
      );
      expect(candidates).toContainEqual(value);
    }
    const big = await store.get("big");
    const bigCandidates = [counter, counter + 1]
      .map((n) => n - (n % BIG_EVERY))
      .map((i) => (i >= 0 ? bigValue(i) : undefined));
    expect(
      bigCandidates.includes(big as string | undefined),
      `"big" holds ${String(big).slice(0, 20)}…`,
    ).toBe(true);
    await store.close();
  }
});
