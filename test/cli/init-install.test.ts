/**
 * Installing bothost outside its clone, as README.md says: `npm pack` in the clone, then
 * `npx ./bothost-<version>.tgz init my-bots`; the project depends on that tarball (`file:`), so
 * `npm install` and `npm test` work in it with no registry copy of bothost. npm runs offline: the
 * dependencies come from the local npm cache. Also where `bothost init` points the dependency
 * for a checkout, an install from a local file, and a registry install.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bothostSource } from "../../src/cli/init-source.ts";
import { assertBuilt, repoRoot } from "../support/cli.ts";

const run = promisify(execFile);
let dir: string;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(path.join(tmpdir(), "bothost-install-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  // npx's install of this run's tarball, in npm's cache.
  const cache = (await run("npm", ["config", "get", "cache"])).stdout.trim();
  const installs = path.join(cache, "_npx");
  for (const entry of await readdir(installs).catch(() => [])) {
    const manifest = await readFile(path.join(installs, entry, "package.json"), "utf8").catch(() => "");
    if (manifest.includes(path.basename(dir)))
      await rm(path.join(installs, entry), { recursive: true, force: true });
  }
});

/**
 * npm (or npx) as a user runs it, offline, without the test runner's npm_* variables; `tty: false`
 * as in a non-interactive shell (no CI variable either, which npx would take as a yes).
 */
function npm(args: string[], cwd: string, tool: "npm" | "npx" = "npm") {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|CI$)/i.test(k)));
  return run(tool, ["--offline", "--no-audit", "--no-fund", ...args], {
    cwd,
    env: { ...env, ...(tool === "npm" ? { CI: "1" } : {}), NO_COLOR: "1" },
    maxBuffer: 1 << 24,
  });
}

/** The README's command that creates a project from the tarball, as npx arguments, for `tarball`. */
async function readmeInit(tarball: string): Promise<string[]> {
  const readme = await readFile(path.join(repoRoot, "README.md"), "utf8");
  const line = /^npx (.*?\.\/bothost-[\d.]+\.tgz init) \S+/m.exec(readme);
  if (!line) throw new Error("README.md has no `npx … ./bothost-<version>.tgz init <dir>` line");
  return line[1]!.split(/\s+/).map((a) => (/^\.\/bothost-.*\.tgz$/.test(a) ? `./${tarball}` : a));
}

/**
 * `npm(args)`; when npm, offline, finds a package missing from its cache (a machine whose cache
 * lacks something the template needs), the test says so and skips instead of failing.
 */
async function offline(ctx: { skip: () => void }, args: string[], cwd: string, tool: "npm" | "npx" = "npm") {
  try {
    return await npm(args, cwd, tool);
  } catch (err) {
    const output = String((err as { stderr?: string }).stderr ?? "");
    if (!output.includes("ENOTCACHED")) throw err;
    const missing = /request to (\S+) failed/.exec(output)?.[1] ?? "a package";
    console.log(`init-install: skipped: npm runs offline here and its cache lacks ${missing}`);
    ctx.skip();
    throw err;
  }
}

describe("from a tarball", () => {
  it("README.md's npx ./bothost-<version>.tgz init writes a project that installs and tests offline", async (ctx) => {
    const { stdout: packed } = await run(
      "npm",
      ["pack", "--ignore-scripts", "--json", "--pack-destination", dir],
      { cwd: repoRoot, maxBuffer: 1 << 24 },
    );
    const packedAs = (JSON.parse(packed) as { filename: string }[])[0]!.filename;
    // A name of this run's own: npx keeps its install of a spec, and installs over it (keeping the
    // packages already there) when the same spec names another tarball later.
    const tarball = packedAs.replace(/\.tgz$/, `-${path.basename(dir)}.tgz`);
    await rename(path.join(dir, packedAs), path.join(dir, tarball));
    // README.md's own command, in a non-interactive shell.
    const created = await offline(ctx, [...(await readmeInit(tarball)), "my-bots"], dir, "npx");
    // npx installs the tarball without bothost's overrides: its own dependencies must suit this Node.js.
    expect(created.stdout + created.stderr).not.toContain("EBADENGINE");
    const project = path.join(dir, "my-bots");
    expect(created.stdout).toContain(`It depends on bothost from ${path.join(dir, tarball)}`);
    const manifest = JSON.parse(await readFile(path.join(project, "package.json"), "utf8"));
    expect(manifest.dependencies.bothost).toBe(`file:../${tarball}`);

    // No dependency refuses this Node.js version.
    const installed = await offline(ctx, ["install"], project);
    expect(installed.stdout + installed.stderr).not.toContain("EBADENGINE");
    // A test that reads a file, as tests often do: `npm run check`'s tsc knows Node's modules.
    await writeFile(
      path.join(project, "test", "fixture-file.test.ts"),
      'import { readFile } from "node:fs/promises";\nimport { expect, test } from "bothost/testing/vitest";\n\n' +
        'test("reads its own file", async () => {\n' +
        '  expect(await readFile(new URL(import.meta.url), "utf8")).toContain("reads its own file");\n' +
        '  expect(process.platform).toBeTypeOf("string");\n});\n',
    );
    await npm(["exec", "--", "tsc", "--noEmit"], project);
    const tests = await npm(["test"], project);
    // The template's three tests (a command, a refused command, a reminder by the sandbox clock) and ours.
    expect(tests.stdout + tests.stderr).toMatch(/Tests {2}4 passed \(4\)/);
  }, 300_000);
});

describe("bothostSource", () => {
  it("a checkout: the checkout's folder, relative to the project", () => {
    const project = path.join(path.dirname(repoRoot), "elsewhere", "my-bots");
    expect(bothostSource(project, repoRoot)).toEqual({
      spec: `file:${path.relative(project, repoRoot).split(path.sep).join("/")}`,
      local: repoRoot.replace(/\/$/, ""),
    });
  });

  it("installed from a local file: that file; installed from the registry: ^version", async () => {
    const holder = path.join(dir, "holder");
    const installed = path.join(holder, "node_modules", "bothost");
    await mkdir(installed, { recursive: true });
    await writeFile(path.join(dir, "bothost-9.9.9.tgz"), "");
    await writeFile(
      path.join(holder, "package.json"),
      JSON.stringify({ dependencies: { bothost: "file:../bothost-9.9.9.tgz" } }),
    );
    expect(bothostSource(path.join(dir, "new"), installed)).toEqual({
      spec: "file:../bothost-9.9.9.tgz",
      local: path.join(dir, "bothost-9.9.9.tgz"),
    });
    await writeFile(
      path.join(holder, "package.json"),
      JSON.stringify({ dependencies: { bothost: "^0.1.0" } }),
    );
    const version = JSON.parse(await readFile(path.join(repoRoot, "package.json"), "utf8")).version;
    expect(bothostSource(path.join(dir, "new"), installed)).toEqual({ spec: `^${version}` });
  });
});
