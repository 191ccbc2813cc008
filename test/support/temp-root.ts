/**
 * vitest's global setup: the run's temporary files (each test's projects, state directories, org
 * files, and those of the processes it starts) go in one folder of their own, made here as the
 * workers' TMPDIR and removed with all it holds when the run ends, whether or not each test
 * removed its own. A run stopped by kill -9 leaves that one folder. The setup runs once per
 * project: only the first makes the folder (the name is short, for socket paths under it).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const MARK = "BOTHOST_TEST_TMPDIR";

export default function setup(): () => void {
  if (process.env[MARK] !== undefined) return () => {};
  const root = mkdtempSync(path.join(tmpdir(), "bt-run-"));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = root;
  process.env[MARK] = root;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    delete process.env[MARK];
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
