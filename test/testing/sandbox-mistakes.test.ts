/**
 * bothost/testing's `startSandbox` outside the vitest fixture (node:test, jest, a plain script): a
 * `sandbox.control` call's mistake, and a start refused for its org, fail with a stack that starts
 * at the caller's own line, not among the sandbox's frames. Run in a plain node process on the
 * built package, as a bot's own test imports it.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const testing = pathToFileURL(path.join(root, "dist/bundle/testing.js")).href;
const dir = mkdtempSync(path.join(tmpdir(), "bothost-sandbox-mistakes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `body` (a module's code, `startSandbox` imported) with node; what it printed. */
async function run(body: string): Promise<string> {
  const file = path.join(dir, `script-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, `import { startSandbox } from ${JSON.stringify(testing)};\n${body}\n`);
  const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 30_000 });
  return stdout;
}

/** The stack's frames, and whether any is in bothost's own code. */
const framesOf = (stack: string) => stack.split("\n").filter((l) => /^\s+at /.test(l));

it("a control call's mistake starts at the script's own line", async () => {
  const out = await run(`
const sandbox = await startSandbox();
try {
  sandbox.control.setUserRateLimit("nobody@sandbox.example", [[60, 2]]);
} catch (err) {
  console.log(JSON.stringify({ code: err.code, stack: err.stack }));
}
await sandbox.stop();`);
  const { code, stack } = JSON.parse(out) as { code: string; stack: string };
  expect(code).toBe("SANDBOX_CONTROL");
  const frames = framesOf(stack);
  expect(frames[0]).toContain("script-");
  expect(frames[0]).toMatch(/:5:\d+\)?$/);
  expect(frames.filter((f) => f.includes(path.join(root, "dist")))).toEqual([]);
});

it("an org the sandbox refuses fails at the script's own line", async () => {
  const out = await run(`
try {
  await startSandbox({ org: { users: [{ email: "not an email" }] } });
} catch (err) {
  console.log(JSON.stringify({ name: err.name, stack: err.stack }));
}`);
  const { name, stack } = JSON.parse(out) as { name: string; stack: string };
  expect(name).toBe("SandboxOrgError");
  const frames = framesOf(stack);
  expect(frames[0]).toContain("script-");
  expect(frames.filter((f) => f.includes(path.join(root, "dist")))).toEqual([]);
});
