/**
 * A real crash: a child process writes to a FileStore without pause and is killed with SIGKILL
 * at a random moment (mid-append, mid-fsync or mid-compaction). After each kill the store must
 * reopen uncorrupted, hold every write the child had seen flushed (or committed: commit() writes
 * without fsync, which a kill of the process cannot undo), and hold the state after some prefix
 * of the child's writes.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { FileStore } from "../../src/state/file-store.ts";
import { test } from "../support/state.ts";
import { BIG_EVERY, bigValue, expectedValue } from "./fixtures/writer-values.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const child = fixture("writer-child.ts");
const ROUNDS = 6;
/**
 * The rounds bound the work; each spawns a TypeScript child (about 1.5 s here, alone on 2 cores).
 * The budget holds at a quarter of that speed with the suite's other files running beside it.
 */
const KILL_ROUNDS_BUDGET_MS = 180_000;
/** Alternate a tiny compaction threshold (kills land mid-compaction) with a large one (kills land
 * mid-append of a multi-megabyte record and leave a torn last line). */
const compactAfter = (round: number) => (round % 2 === 0 ? "16384" : "8000000");

type Mode = "flush" | "commit";

/** A TypeScript child process (through jiti) with its stderr kept and its exit signal awaited. */
function spawnChild(args: string[]) {
  const proc = spawn(process.execPath, ["--import", "jiti/register", ...args], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  proc.stderr.on("data", (chunk) => {
    text += chunk;
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    proc.on("exit", (_code, signal) => resolve(signal)),
  );
  return { proc, stderr: () => text, exited };
}

/**
 * Run the writer until it reported `reports` flushes (or commits) plus a random extra moment, then
 * SIGKILL it. Resolves the iteration of the last write it reported durable.
 */
async function runAndKill(
  dir: string,
  reports: number,
  compactAfterBytes: string,
  mode: Mode,
): Promise<number> {
  const { proc, stderr, exited } = spawnChild([child, dir, compactAfterBytes, mode]);
  let lastDurable = -1;
  let seen = 0;
  try {
    for await (const line of createInterface({ input: proc.stdout })) {
      const match = /^(flushed|committed) (\d+)$/.exec(line);
      if (match) {
        expect(match[1]).toBe(mode === "flush" ? "flushed" : "committed");
        lastDurable = Number(match[2]);
        if (++seen === reports) break;
      }
    }
    // Let it run on for a random moment so the kill lands anywhere in the write/flush/compact cycle.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 15));
  } finally {
    proc.kill("SIGKILL");
  }
  expect(await exited, `writer child failed: ${stderr()}`).toBe("SIGKILL");
  return lastDurable;
}

/** The largest i ≤ n with i ≡ j (mod 50), or undefined. */
function lastWrite(n: number, j: number): number | undefined {
  if (n < j) return undefined;
  return n - ((n - j) % 50);
}

/** Kill the writer `ROUNDS` times; after each kill check the reopened store. */
async function killRounds(dir: string, mode: Mode): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    const lastDurable = await runAndKill(dir, 3 + Math.floor(Math.random() * 40), compactAfter(round), mode);
    const store = await FileStore.open(dir, { autoFlushMs: 0 });
    const counter = (await store.get("counter")) as number;
    expect(counter).toBeGreaterThanOrEqual(lastDurable);
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
}

test(
  "survives SIGKILL at random moments without corruption or losing flushed writes",
  async ({ dir }) => {
    await killRounds(dir, "flush");
  },
  KILL_ROUNDS_BUDGET_MS,
);

test(
  "survives SIGKILL at random moments without losing committed (not flushed) writes",
  async ({ dir }) => {
    await killRounds(dir, "commit");
  },
  KILL_ROUNDS_BUDGET_MS,
);

test("a commit() issued during a compaction lands in the fresh log and survives SIGKILL", async ({ dir }) => {
  const { proc, stderr, exited } = spawnChild([fixture("compaction-commit-child.ts"), dir]);
  try {
    for await (const line of createInterface({ input: proc.stdout })) if (line === "committed") break;
  } finally {
    proc.kill("SIGKILL");
  }
  expect(await exited, `child failed: ${stderr()}`).toBe("SIGKILL");

  // The compaction took its snapshot before "late" was written, and "late" went into the new log.
  const snapshot = JSON.parse(await readFile(join(dir, "state.json"), "utf8"));
  expect(snapshot.generation).toBe(1);
  expect(Object.keys(snapshot.entries)).toHaveLength(20);
  const log = (await readFile(join(dir, "state.log"), "utf8")).split("\n");
  expect(log).toEqual([
    '{"format":"bothost-state-log","version":1,"generation":1}',
    '{"op":"set","key":"late","value":"after the snapshot"}',
    "",
  ]);
  const store = await FileStore.open(dir, { autoFlushMs: 0 });
  expect(store.recovery).toEqual({ replayedRecords: 1, droppedTornBytes: 0, discardedStaleLog: false });
  expect(await store.get("late")).toBe("after the snapshot");
  expect(await store.get("filler19")).toBe("x".repeat(100));
  await store.close();
});

const hasPrlimit = process.platform === "linux" && spawnSync("prlimit", ["--version"]).status === 0;

test.skipIf(!hasPrlimit)(
  "a commit() that fails part-way (file size limit) cuts the log back and keeps the lines for the next",
  async ({ dir }) => {
    const limit = 1024 * 1024;
    const proc = spawnSync(
      "prlimit",
      [
        `--fsize=${limit}:unlimited`,
        process.execPath,
        "--import",
        "jiti/register",
        fixture("file-size-limit-child.ts"),
        dir,
        String(2 * limit),
      ],
      { cwd: repoRoot, encoding: "utf8" },
    );
    expect(proc.signal, `child failed: ${proc.stderr}`).toBe("SIGKILL");
    const report = JSON.parse(proc.stdout.trim());
    const logPath = join(dir, "state.log");
    expect(report.error.code).toBe("STATE_IO");
    expect(report.error.message).toMatch(
      new RegExp(
        `^Could not write ${logPath}: .*EFBIG.*\\. Free disk space or fix the permissions; the unwritten changes stay in memory and the next commit or flush retries\\.$`,
      ),
    );
    expect(report.sizeAfterFailure).toBe(report.sizeBefore); // the partial write was cut back
    expect(report.sizeAfterRetry).toBeGreaterThan(2 * limit);

    const lines = (await readFile(logPath, "utf8")).trimEnd().split("\n");
    expect(lines.map((line) => JSON.parse(line).key)).toEqual([undefined, "a", "big", "after"]);
    const store = await FileStore.open(dir, { autoFlushMs: 0 });
    expect(await store.get("a")).toBe(1);
    expect(await store.get("big")).toHaveLength(2 * limit);
    expect(await store.get("after")).toBe(2);
    await store.close();
  },
);
