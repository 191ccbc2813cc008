/**
 * A typo in a bot's `module:` path is a config problem like any other: `run` and `check` report it
 * as `file:line:column bots.<name>.module: …` (exit 2, no stack trace), at the module value.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, hasStackTrace, runCli } from "../support/cli.ts";

let dir: string;
let config: string;
/** A project with a package installed whose `exports` list only its main entry. */
let project: string;

/** A config in `project` whose bot module is `module`. */
async function configWith(module: string): Promise<string> {
  const file = path.join(project, `bothost-${module.replace(/\W+/g, "-")}.yaml`);
  await writeFile(
    file,
    [
      "server:",
      "  url: https://chat.example.org",
      "bots:",
      "  relay:",
      `    module: ${module}`,
      "    email: relay-bot@chat.example.org",
      "    api_key: fake-key-0123456789",
      "",
    ].join("\n"),
  );
  return file;
}

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(path.join(tmpdir(), "bothost-module-typo-"));
  await mkdir(path.join(dir, "greeter-proj", "bots"), { recursive: true });
  await writeFile(path.join(dir, "greeter-proj", "bots", "greeter.ts"), "export default { setup() {} };\n");
  project = path.join(dir, "project");
  const pkg = path.join(project, "node_modules", "shipped-bots");
  await mkdir(path.join(pkg, "bots"), { recursive: true });
  await writeFile(
    path.join(pkg, "package.json"),
    JSON.stringify({ name: "shipped-bots", type: "module", exports: { ".": "./index.js" } }),
  );
  await writeFile(path.join(pkg, "bots", "relay.ts"), "export default { setup() {} };\n");
  await mkdir(path.join(dir, "ops"));
  config = path.join(dir, "ops", "bothost.yaml");
  await writeFile(
    config,
    [
      "server:",
      "  url: https://chat.example.org",
      "bots:",
      "  greeter:",
      "    module: ../greeter-proj/bots/greetr.ts",
      "    email: greeter-bot@chat.example.org",
      "    api_key: fake-key-0123456789",
      "",
    ].join("\n"),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("a bot module that is not found", () => {
  it.each([["run"], ["check"]])(
    "%s names the config file:line:column and bots.greeter.module",
    async (command) => {
      const { code, stdout, stderr } = await runCli([command, "-c", config]);
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toBe(
        `${config}:5:13 bots.greeter.module: ../greeter-proj/bots/greetr.ts was not found (no file ${path.join(dir, "greeter-proj/bots/greetr.ts")}): check the path; it starts at the config file's folder (MODULE_NOT_FOUND)\n`,
      );
      expect(hasStackTrace(stderr)).toBe(false);
    },
  );
});

describe("an absolute module path that is not found", () => {
  it("check does not say the path starts at the config file's folder", async () => {
    const missing = path.join(dir, "greeter-proj", "bots", "greetr.ts");
    const file = await configWith(missing);
    const { code, stderr } = await runCli(["check", "-c", file]);
    expect(code).toBe(2);
    expect(stderr).toBe(
      `${file}:5:13 bots.relay.module: ${missing} was not found (no file ${missing}): check the path (MODULE_NOT_FOUND)\n`,
    );
  });
});

describe("a syntax error in a file the module imports", () => {
  it("check names that file and its line, not the module's", async () => {
    const bots = path.join(project, "bots");
    await mkdir(bots, { recursive: true });
    await writeFile(path.join(bots, "texts.ts"), 'export const greeting = "Hey" +;\n');
    await writeFile(
      path.join(bots, "hello.ts"),
      'import { greeting } from "./texts.ts";\nexport default { setup() { return greeting; } };\n',
    );
    const file = await configWith("./bots/hello.ts");
    const { code, stderr } = await runCli(["check", "-c", file], { cwd: project });
    expect(code).toBe(2);
    expect(stderr).toBe(
      'bothost check: bot "relay": module ./bots/hello.ts imports a file with a syntax error, at ./bots/texts.ts:1:32: Unexpected token [MODULE_LOAD_FAILED]\n',
    );
    expect(hasStackTrace(stderr)).toBe(false);
  });
});

describe("a file of an installed package that its exports do not list", () => {
  it("check names the file's path to write, not an npm install of the package", async () => {
    const file = await configWith("shipped-bots/bots/relay.ts");
    const { code, stdout, stderr } = await runCli(["check", "-c", file]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe(
      `${file}:5:13 bots.relay.module: shipped-bots/bots/relay.ts is not among what the package shipped-bots exports (its package.json "exports"): name the file by its path, module: ./node_modules/shipped-bots/bots/relay.ts (MODULE_NOT_FOUND)\n`,
    );
    expect(hasStackTrace(stderr)).toBe(false);
  });

  it("a file the installed package does not have is named as such", async () => {
    const file = await configWith("shipped-bots/bots/rely.ts");
    const { code, stderr } = await runCli(["check", "-c", file]);
    expect(code).toBe(2);
    expect(stderr).toBe(
      `${file}:5:13 bots.relay.module: shipped-bots/bots/rely.ts is not found: the package shipped-bots is installed (${path.join(project, "node_modules/shipped-bots")}) but has no bots/rely.ts (MODULE_NOT_FOUND)\n`,
    );
  });
});

describe("a module path that names a file of another kind", () => {
  it.each([["run"], ["check"]])(
    "%s locates it at bots.<name>.module, as a path not found",
    async (command) => {
      await writeFile(path.join(project, "relay.py"), "print('relay')\n");
      const file = await configWith("./relay.py");
      const { code, stdout, stderr } = await runCli([command, "-c", file]);
      expect({ code, stdout, stderr }).toEqual({
        code: 2,
        stdout: "",
        stderr: `${file}:5:13 bots.relay.module: ./relay.py is not a JavaScript or TypeScript file: bot modules end in .ts, .mts, .cts, .js, .mjs, .cjs (MODULE_INVALID)\n`,
      });
    },
  );
});
