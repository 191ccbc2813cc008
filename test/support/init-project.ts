/**
 * A project made by the built `bothost init`, with this repository linked as its `bothost`
 * dependency and ours as its zod (as an install would put them, without the network).
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { assertBuilt, cliPath, repoRoot } from "./cli.ts";

/** `<dir>/my-bots` made by `bothost init`; remove `dir` when done. */
export async function initProject(label: string): Promise<{ dir: string; project: string }> {
  assertBuilt();
  const dir = await mkdtemp(path.join(tmpdir(), `bothost-${label}-`));
  const project = path.join(dir, "my-bots");
  await promisify(execFile)(process.execPath, [cliPath, "init", project]);
  await mkdir(path.join(project, "node_modules"));
  await symlink(repoRoot, path.join(project, "node_modules", "bothost"), "dir");
  await symlink(path.join(repoRoot, "node_modules", "zod"), path.join(project, "node_modules", "zod"), "dir");
  return { dir, project };
}
