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
/** A start-up on a busy machine takes some: a process not done by then failed in some other way. */
const GIVE_UP_MS = 20_000;
beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(path.join(tmpdir(), "bothost-dev-watch-"));
  await writeFile(path.join(dir, "bot.ts"), "export default {};\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const ALIVE = "(still alive)";

/**
 * Run `body` in a node process with `SourceWatch` and `file` in scope: "exited: <stdout>" when it
 * ends by itself, "alive" when something still holds it open. `probe`: after the body, an unref'd
 * timer, which fires only in a process something else keeps alive, says so and ends it (without
 * it, a body that never ends is killed after 20 s, also "alive").
 */
async function runWatch(body: string, { probe }: { probe: boolean }): Promise<string> {
  const module = path.join(repoRoot, "dist/cli/dev-watch.js");
  const script = `
    const { SourceWatch } = await import(${JSON.stringify(module)});
    const file = ${JSON.stringify(path.join(dir, "bot.ts"))};
    ${body}
    ${probe ? `setTimeout(() => { console.log(${JSON.stringify(ALIVE)}); process.exit(0); }, 200).unref();` : ""}
  `;
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
      timeout: GIVE_UP_MS,
    });
    return stdout.trim().endsWith(ALIVE) ? "alive" : `exited: ${stdout.trim()}`;
  } catch (err) {
    return (err as { killed?: boolean }).killed ? "alive" : `failed: ${String(err)}`;
  }
}

it("a set after close opens no watcher, so a stopping dev exits", async () => {
  const body = "const watch = new SourceWatch(() => {}, () => {}); watch.close(); watch.set([file]);";
  expect(await runWatch(body, { probe: true })).toBe("exited: ");
});

it(
  "a watch that is set keeps its process alive, and reports an edit to a watched file",
  async () => {
    // The counterpart of the test above: without close, the same set keeps the process running.
    expect(await runWatch("new SourceWatch(() => {}, () => {}).set([file]);", { probe: true })).toBe("alive");
    const edited = await runWatch(
      `
    const watch = new SourceWatch(() => { console.log("changed"); watch.close(); }, () => {});
    watch.set([file]);
    const { appendFile } = await import("node:fs/promises");
    await appendFile(file, "// edit\\n");
  `,
      { probe: false },
    );
    expect(edited).toBe("exited: changed");
  },
  2 * GIVE_UP_MS,
);
