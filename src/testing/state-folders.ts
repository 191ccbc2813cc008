/** The testing kit's bots' state folders: removed by `stop({ wipe: true })`, else when the process exits. */
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** State folders not wiped yet, removed when the process exits. */
const unwiped = new Set<string>();
let exitHook = false;

/** A new state folder, kept until {@link wipe} or the process's exit. */
export async function newStateFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "bothost-testbot-"));
  keepUntilExit(dir);
  return dir;
}

function keepUntilExit(dir: string): void {
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const d of unwiped) rmSync(d, { recursive: true, force: true });
    });
  }
  unwiped.add(dir);
}

export async function wipe(dir: string): Promise<void> {
  unwiped.delete(dir);
  await rm(dir, { recursive: true, force: true });
}
