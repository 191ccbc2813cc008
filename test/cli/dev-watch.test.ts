/**
 * The watch `bothost dev` keeps on its sources, in a process of its own: whether it is what keeps
 * that process alive is the point (a watch set worked out while dev stops must not).
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertBuilt, repoRoot } from "../support/cli.ts";

let dir: string;
const ALIVE_AFTER_MS = 20_000;
beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(path.join(tmpdir(), "bothost-dev-watch-"));
  await writeFile(path.join(dir, "bot.ts"), "export default {};\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/**
 * Run `body` in a node process with `SourceWatch` and `file` in scope: "exited: <stdout>" when it
 * ends by itself within 20 s (a start-up on a busy machine takes some), "alive" when it had to be killed.
 */
async function runWatch(body: string): Promise<string> {
  const module = path.join(repoRoot, "dist/cli/dev-watch.js");
  const script = `
    const { SourceWatch } = await import(${JSON.stringify(module)});
    const file = ${JSON.stringify(path.join(dir, "bot.ts"))};
    ${body}
  `;
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
      timeout: ALIVE_AFTER_MS,
    });
    return `exited: ${stdout.trim()}`;
  } catch (err) {
    return (err as { killed?: boolean }).killed ? "alive" : `failed: ${String(err)}`;
  }
}

it("a set after close opens no watcher, so a stopping dev exits", async () => {
  const body = "const watch = new SourceWatch(() => {}, () => {}); watch.close(); watch.set([file]);";
  expect(await runWatch(body)).toBe("exited: ");
});

it(
  "a watch that is set keeps its process alive, and reports an edit to a watched file",
  async () => {
    // The counterpart of the test above: without close, the same set keeps the process running.
    expect(await runWatch("new SourceWatch(() => {}, () => {}).set([file]);")).toBe("alive");
    const edited = await runWatch(`
    const watch = new SourceWatch(() => { console.log("changed"); watch.close(); }, () => {});
    watch.set([file]);
    const { appendFile } = await import("node:fs/promises");
    await appendFile(file, "// edit\\n");
  `);
    expect(edited).toBe("exited: changed");
  },
  3 * ALIVE_AFTER_MS,
);
