/**
 * The `bothost` command line itself, run as a subprocess: help, version, unknown commands and
 * options. Usage mistakes get one clear line on stderr and exit code 2 (64 for an unknown
 * command), never a stack trace. On Node.js lines with a compile cache, the CLI keeps one in the
 * user's cache folder; on Node.js 20 it writes nothing there.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import module from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it, type TestContext } from "vitest";
import { assertBuilt, hasStackTrace, runCli } from "../support/cli.ts";

const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };

beforeAll(assertBuilt);

describe.concurrent("bothost", () => {
  it("--version prints the package version", async () => {
    expect(await runCli(["--version"])).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });

  it("--help lists every command, the options and the exit codes", async () => {
    const { code, stdout, stderr } = await runCli(["--help"]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toContain(`bothost ${version}:`);
    expect(stdout).toMatch(
      /^ {2}check {2,}Validate the config and modules, then check each bot's credentials/m,
    );
    expect(stdout).toMatch(/^ {2}run {2,}Run every bot in the config until SIGINT\/SIGTERM$/m);
    expect(stdout).toContain(
      "Exit codes: 0 ok, 1 runtime failure, 2 invalid config or usage, 3 authentication failed, 64 unknown command,\n75 try again shortly (bothost dialogs end).",
    );
  });

  it("no arguments and `help` print the same help", async () => {
    const help = await runCli(["--help"]);
    expect(await runCli([])).toEqual(help);
    expect(await runCli(["help"])).toEqual(help);
  });

  it("`help <command>` prints the command's help; `help` of no command says so", async () => {
    const run = await runCli(["run", "--help"]);
    expect(run.stdout).toMatch(/^Usage: bothost run/);
    expect(await runCli(["help", "run"])).toEqual(run);
    expect(await runCli(["help", "rn"])).toEqual({
      code: 64,
      stdout: "",
      stderr: 'bothost: unknown command "rn" (did you mean "run"?). Run "bothost --help" for the list.\n',
    });
  });

  it("an unknown command exits 64 and points at the list", async () => {
    expect(await runCli(["frobnicate"])).toEqual({
      code: 64,
      stdout: "",
      stderr: 'bothost: unknown command "frobnicate". Run "bothost --help" for the list.\n',
    });
  });

  it("a misspelt command is named with the one meant (exit 64)", async () => {
    expect(await runCli(["int"])).toEqual({
      code: 64,
      stdout: "",
      stderr: 'bothost: unknown command "int" (did you mean "init"?). Run "bothost --help" for the list.\n',
    });
    expect((await runCli(["stauts"])).stderr).toContain('(did you mean "status"?)');
  });

  it("an unknown option before the command exits 2", async () => {
    expect(await runCli(["--verbose"])).toEqual({
      code: 2,
      stdout: "",
      stderr: 'bothost: unknown option "--verbose". Run "bothost --help" for the options.\n',
    });
  });

  it.for([
    [
      ["run", "--bogus"],
      "bothost run: Unknown option '--bogus'. Run \"bothost run --help\" for the options.\n",
    ],
    [
      ["check", "--confg", "x.yaml"],
      'bothost check: Unknown option \'--confg\' (did you mean "--config"?). Run "bothost check --help" for the options.\n',
    ],
    [
      ["run", "--config"],
      "bothost run: Option '-c, --config <value>' argument missing. Run \"bothost run --help\" for the options.\n",
    ],
    [
      ["check", "extra.yaml"],
      "bothost check: Unexpected argument 'extra.yaml'. This command does not take positional arguments. Run \"bothost check --help\" for the options.\n",
    ],
    [
      // A value that looks like an option: node's three sentences on three lines, now one.
      ["dialogs", "end", "survey", "12", "--note", "--config", "x.yaml"],
      'bothost dialogs: --note needs a value; a value beginning with "-" is given as --note=VALUE. Run "bothost dialogs --help" for the options.\n',
    ],
  ] as const)("%j is a usage error: exit 2, one line", async ([args, message]) => {
    const result = await runCli([...args]);
    expect(result).toEqual({ code: 2, stdout: "", stderr: message });
    expect(hasStackTrace(result.stderr)).toBe(false);
  });

  it.for(["run", "check"])("%s --help describes the command and its options", async (command) => {
    const { code, stdout, stderr } = await runCli([command, "--help"]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toContain(`Usage: bothost ${command} [--config FILE]`);
    expect(stdout).toContain("-c, --config FILE");
  });
});

/** Node.js 22.1+ has `module.enableCompileCache`; Node.js 20 does not. */
const hasCompileCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === "function";

/** A temporary folder removed when the test `context` ends (its own: the tests run concurrently). */
async function tempDir(context: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-compile-cache-"));
  context.onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Each file under `dir` (relative path) with its inode: an entry written again gets a new one. */
async function files(dir: string): Promise<Record<string, number>> {
  const found: Record<string, number> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    found[path.relative(dir, file)] = (await stat(file)).ino;
  }
  return found;
}

describe.concurrent("the compile cache", () => {
  it.runIf(hasCompileCache)(
    "is kept in $XDG_CACHE_HOME/bothost/compiled/ by a start, and a second start uses it unchanged",
    async (context) => {
      const home = await tempDir(context);
      const first = await runCli(["run", "--help"], { env: { XDG_CACHE_HOME: home } });
      expect(first).toMatchObject({ code: 0, stderr: "" });
      for (const folder of ["bothost", "bothost/compiled"]) {
        expect(((await stat(path.join(home, folder))).mode & 0o777).toString(8)).toBe("700");
      }
      const compiled = path.join(home, "bothost", "compiled");
      // One folder per Node.js version (Node.js names it), one entry per module loaded.
      const [versioned, ...others] = await readdir(compiled);
      expect(others).toEqual([]);
      expect(versioned).toContain(process.version);
      const entries = await files(compiled);
      expect(Object.keys(entries).length).toBeGreaterThan(5);

      // The second start takes every entry as it is: none is written again.
      expect(await runCli(["run", "--help"], { env: { XDG_CACHE_HOME: home } })).toEqual(first);
      expect(await files(compiled)).toEqual(entries);
    },
  );

  it.runIf(hasCompileCache)("is left where the user's own NODE_COMPILE_CACHE puts it", async (context) => {
    const [home, own] = [await tempDir(context), await tempDir(context)];
    const result = await runCli(["--version"], { env: { XDG_CACHE_HOME: home, NODE_COMPILE_CACHE: own } });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(await readdir(home)).toEqual([]);
    expect(Object.keys(await files(own)).length).toBeGreaterThan(0);
  });

  it.runIf(!hasCompileCache)(
    "is not kept on Node.js 20: nothing is written, nothing said",
    async (context) => {
      const home = await tempDir(context);
      expect(await runCli(["--version"], { env: { XDG_CACHE_HOME: home } })).toEqual({
        code: 0,
        stdout: `${version}\n`,
        stderr: "",
      });
      expect(await readdir(home)).toEqual([]);
    },
  );

  it("is left off, silently, when its folder cannot be made", async (context) => {
    // The cache home is a file: no folder can be made in it, whatever the user's rights.
    const file = path.join(await tempDir(context), "not-a-folder");
    await writeFile(file, "");
    expect(await runCli(["--version"], { env: { XDG_CACHE_HOME: file } })).toEqual({
      code: 0,
      stdout: `${version}\n`,
      stderr: "",
    });
  });
});
