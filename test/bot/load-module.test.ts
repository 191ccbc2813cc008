/**
 * loadBotModule: resolving, loading (.ts without a build, .mjs, .cjs, packages), unwrapping and
 * checking bot modules, with the exact error for each way a module can be wrong.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { createJiti } from "jiti";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeLoadError, loadBotModule, releaseTransform } from "../../src/bot/load-module.ts";
import { isModuleError, type ModuleError } from "../../src/bot/module-error.ts";

const execFileAsync = promisify(execFile);
const configDir = path.resolve("test/fixtures/bots");

async function failure(specifier: string, dir = configDir): Promise<ModuleError> {
  const err = await loadBotModule(specifier, { configDir: dir, botName: "demo" }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isModuleError(err)) throw new Error(`expected a ModuleError for ${specifier}, got ${String(err)}`);
  expect(err.stack?.split("\n")[0]).toBe(`ModuleError: ${err.message}`);
  return err;
}

/**
 * A temp folder holding `files` (name → text) for the enclosing describe, removed after it:
 * modules written here, not committed, as the type checker and linter would reject them.
 */
function modulesFolder(prefix: string, files: Record<string, string>): () => string {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), prefix));
    for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => dir;
}

describe("loading", () => {
  it("loads a .ts module that imports zod, with no build step", async () => {
    const { definition } = await loadBotModule("./with-settings.ts", { configDir });
    expect(definition.events).toEqual(["message", "reaction"]);
    expect(typeof definition.setup).toBe("function");
    expect(definition.settings?.safeParse({ threshold: 2 })).toMatchObject({
      success: true,
      data: { greeting: "Hello", threshold: 2, mode: "lenient", channels: [] },
    });
    const { seen } = (await import("../fixtures/bots/with-settings.ts")) as { seen: string[] };
    expect(Object.isFrozen(definition)).toBe(true);
    expect(seen).toEqual([]);
  });

  it.each([
    ["./plain.ts", undefined],
    ["./esm.mjs", ["reaction"]],
    ["./named-exports.mjs", ["typing"]],
    ["./commonjs.cjs", ["message"]],
    ["./double-default.cjs", ["message"]],
    // A bare relative path that exists is taken as the file.
    ["esm.mjs", ["reaction"]],
  ])("loads and unwraps %s", async (specifier, events) => {
    const { definition } = await loadBotModule(specifier, { configDir });
    expect(definition.events).toEqual(events);
    expect(typeof definition.setup).toBe("function");
  });

  it("accepts an absolute path and a file: URL", async () => {
    const file = path.join(configDir, "esm.mjs");
    expect((await loadBotModule(file, { configDir: "/" })).definition.events).toEqual(["reaction"]);
    expect((await loadBotModule(`file://${file}`, { configDir: "/" })).definition.events).toEqual([
      "reaction",
    ]);
  });

  it("calls setup with the module as this", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "bothost-bot-"));
    try {
      await writeFile(
        path.join(dir, "this.mjs"),
        "export default { prefix: 'p', setup(bot) { bot.out = this.prefix; } };\n",
      );
      const { definition } = await loadBotModule("./this.mjs", { configDir: dir });
      const bot: { out?: string } = {};
      await definition.setup(bot as never, undefined as never);
      expect(bot.out).toBe("p");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("the TypeScript transform", () => {
  it("is dropped after loading, with the Error hooks babel installs, and loaded again when needed", async () => {
    releaseTransform();
    const before = { prepare: Error.prepareStackTrace, limit: Error.stackTraceLimit };
    const dir = await mkdtemp(path.join(tmpdir(), "bothost-transform-"));
    try {
      for (let round = 0; round < 2; round++) {
        // A source never transformed before (the transpile cache has no entry for it), evaluated
        // again (fresh): transformed by a newly loaded babel.
        await writeFile(
          path.join(dir, "bot.ts"),
          `// ${randomUUID()}\nconst events: string[] = ["message"];\nexport default { events, setup() {} };\n`,
        );
        const { definition } = await loadBotModule("./bot.ts", { configDir: dir, fresh: true });
        expect(definition.events).toEqual(["message"]);
        expect(Error.prepareStackTrace).not.toBe(before.prepare);
        releaseTransform();
        expect(Error.prepareStackTrace).toBe(before.prepare);
        expect(Error.stackTraceLimit).toBe(before.limit);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("packages", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "bothost-pkg-"));
    const pkg = path.join(dir, "node_modules", "bothost-bot-fixture");
    await mkdir(path.join(pkg, "dist"), { recursive: true });
    await writeFile(
      path.join(pkg, "package.json"),
      JSON.stringify({
        name: "bothost-bot-fixture",
        type: "module",
        exports: { ".": { import: "./dist/bot.js" } },
      }),
    );
    await writeFile(
      path.join(pkg, "dist", "bot.js"),
      "export default { events: ['reaction'], setup() {} };\n",
    );
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("resolves an ESM-only package from the config's folder", async () => {
    const { definition } = await loadBotModule("bothost-bot-fixture", { configDir: dir });
    expect(definition.events).toEqual(["reaction"]);
  });

  it("MODULE_NOT_FOUND for a package that is not installed", async () => {
    const err = await failure("bothost-no-such-package", dir);
    expect(err.code).toBe("MODULE_NOT_FOUND");
    expect(err.message).toBe(
      `bot "demo": module bothost-no-such-package is neither a file next to the config nor an installed package: for a file write ./bothost-no-such-package; for a package run npm install bothost-no-such-package in ${dir}`,
    );
  });

  it("MODULE_NOT_FOUND for a file of a package that is not installed says to install the package", async () => {
    for (const [specifier, pkg] of [
      ["bothost-no-such-package/bots/x.ts", "bothost-no-such-package"],
      ["@bothost-no-such/pkg/bots/x.ts", "@bothost-no-such/pkg"],
    ]) {
      const err = await failure(specifier!, dir);
      expect(err.code).toBe("MODULE_NOT_FOUND");
      expect(err.message).toContain(`for a package run npm install ${pkg} in ${dir}`);
    }
  });
});

describe("errors", () => {
  it("MODULE_NOT_FOUND for a missing file", async () => {
    const err = await failure("./nope.ts");
    expect(err.code).toBe("MODULE_NOT_FOUND");
    expect(err.botName).toBe("demo");
    expect(err.specifier).toBe("./nope.ts");
    expect(err.message).toBe(
      `bot "demo": module ./nope.ts was not found (no file test/fixtures/bots/nope.ts): check the path; it starts at the config file's folder`,
    );
  });

  it("MODULE_NOT_FOUND for a shipped bot named as in the clone names the path in the project", async () => {
    // A project that installed bothost: its node_modules/bothost is the package (here, a link to it).
    const project = await mkdtemp(path.join(tmpdir(), "bothost-project-"));
    try {
      await mkdir(path.join(project, "node_modules"));
      await symlink(path.resolve("."), path.join(project, "node_modules/bothost"), "dir");
      const err = await failure("./bots/webhook-relay.ts", project);
      expect(err.code).toBe("MODULE_NOT_FOUND");
      expect(err.message).toMatch(
        /^bot "demo": module \.\/bots\/webhook-relay\.ts was not found \(no file .*bots\/webhook-relay\.ts\): check the path; it starts at the config file's folder; for the bot bothost ships by that name, write \.\/node_modules\/bothost\/bots\/webhook-relay\.ts$/,
      );
      // A name bothost ships no bot by is told as before.
      expect((await failure("./bots/relay.ts", project)).message).toMatch(
        /check the path; it starts at the config file's folder$/,
      );
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });

  it("MODULE_NOT_FOUND for a folder", async () => {
    const err = await failure("../bots/");
    expect(err.message).toBe(
      'bot "demo": module ../bots/ is a folder: name the module file inside it, e.g. ../bots/index.ts',
    );
  });

  it("MODULE_INVALID for a file that is not code", async () => {
    const err = await failure("./bothost.yaml");
    expect(err.code).toBe("MODULE_INVALID");
    expect(err.message).toBe(
      'bot "demo": module ./bothost.yaml is not a JavaScript or TypeScript file: bot modules end in .ts, .mts, .cts, .js, .mjs, .cjs',
    );
  });

  it("MODULE_INVALID without setup", async () => {
    const err = await failure("./no-setup.ts");
    expect(err.code).toBe("MODULE_INVALID");
    expect(err.resolvedPath).toBe(path.join(configDir, "no-setup.ts"));
    expect(err.message).toBe(
      'bot "demo": module ./no-setup.ts has no setup function: add setup(bot, settings) { … } to its default export',
    );
  });

  describe("MODULE_INVALID without a default export names what the module exports", () => {
    const folder = modulesFolder("bothost-no-default-", {
      "named.ts": "export const greeter = { setup() {} };\nexport const version = 2;\n",
      "empty.ts": "const forgotten = { setup() {} };\nvoid forgotten;\n",
      "setup-export.ts": "export function setup() {}\n",
    });

    it.each([
      [
        "./named.ts",
        "(it exports greeter, version): export greeter as the default: export default greeter, or export default defineBot({ … })",
      ],
      ["./empty.ts", "(it exports nothing): write export default defineBot({ setup(bot, settings) { … } })"],
    ])("%s", async (file, what) => {
      const err = await failure(file, folder());
      expect([err.code, err.message]).toEqual([
        "MODULE_INVALID",
        `bot "demo": module ${file} has no default export ${what}`,
      ]);
    });

    it("a module whose own export is setup is still a bot", async () => {
      const { definition } = await loadBotModule("./setup-export.ts", {
        configDir: folder(),
        botName: "demo",
      });
      expect(typeof definition.setup).toBe("function");
    });
  });

  it("MODULE_INVALID lists every problem of the shape", async () => {
    const err = await failure("./bad-shape.mjs");
    expect(err.message).toBe(
      'bot "demo": module ./bad-shape.mjs has a setup that is a string, not a function: make it setup(bot, settings) { … }; has events that is not a list of event type names: write events: ["message", "reaction"]; has settings that is not a zod schema: write settings: z.object({ … })',
    );
  });

  it("MODULE_INVALID for unknown event types, with suggestions", async () => {
    const err = await failure("./unknown-events.mjs");
    expect(err.message).toBe(
      'bot "demo": module ./unknown-events.mjs lists the unknown event type "mesage": did you mean "message"?; lists the unknown event type "frobnicate"',
    );
  });

  it("MODULE_INVALID for a bare function export", async () => {
    const err = await failure("./function-export.mjs");
    expect(err.message).toBe(
      'bot "demo": module ./function-export.mjs exports a function, not a bot: write export default defineBot({ setup: yourFunction })',
    );
  });

  it("MODULE_LOAD_FAILED with the message of an exception at load, not its stack", async () => {
    const err = await failure("./throws-on-load.ts");
    expect(err.code).toBe("MODULE_LOAD_FAILED");
    expect(err.message).toBe(
      'bot "demo": module ./throws-on-load.ts threw while loading at ./throws-on-load.ts:2:7: cannot start: DATABASE_URL is not set',
    );
    expect((err.cause as Error).message).toBe("cannot start: DATABASE_URL is not set");
  });

  describe("an exception of the module's own code at load names where it was thrown", () => {
    const folder = modulesFolder("bothost-throws-", {
      "parse.ts": 'const limits = JSON.parse("{bad");\nexport default { setup() {} };\n',
      "helper.ts": "export const defineThing = (x: unknown) => x;\n",
      "typo.ts": 'import { defineThng } from "./helper.ts";\nexport default defineThng({ setup() {} });\n',
    });

    it("a SyntaxError of JSON.parse is no syntax error of the module: it threw, at its line", async () => {
      const err = await failure("./parse.ts", folder());
      expect(err.message).toMatch(
        /^bot "demo": module \.\/parse\.ts threw while loading at \.\/parse\.ts:1:\d+: Expected property name/,
      );
    });

    it("a name its import lacks is said as written, at its line", async () => {
      const err = await failure("./typo.ts", folder());
      expect(err.message).toMatch(
        /^bot "demo": module \.\/typo\.ts threw while loading at \.\/typo\.ts:2:\d+: defineThng is not a function$/,
      );
    });
  });

  it("MODULE_LOAD_FAILED for a missing import, naming the package and the project that installs it", async () => {
    const err = await failure("./missing-import.mjs");
    expect(err.code).toBe("MODULE_LOAD_FAILED");
    expect(err.message).toBe(
      `bot "demo": module ./missing-import.mjs could not be loaded: Cannot find package 'no-such-package-for-bothost-tests': install what it imports (npm install no-such-package-for-bothost-tests in ${path.resolve(".")}), or fix the import`,
    );
    expect(err.cause).toBeUndefined();
  });

  describe("syntax errors", () => {
    const broken = "export default {\n  setup() {\n    const x = ;\n  },\n};\n";
    const folder = modulesFolder("bothost-syntax-", { "broken.ts": broken, "broken.mjs": broken });

    it("in a .ts module: message and line:column", async () => {
      const err = await failure("./broken.ts", folder());
      expect(err.code).toBe("MODULE_LOAD_FAILED");
      expect(err.message).toBe(
        'bot "demo": module ./broken.ts has a syntax error at ./broken.ts:3:15: Unexpected token',
      );
      // The parser's own error (its column counted from 0) is not kept: a test runner prints a cause.
      expect(err.cause).toBeUndefined();
    });

    it("in a .mjs module: the line:column (Node's own message: see describeLoadError below)", async () => {
      const err = await failure("./broken.mjs", folder());
      expect(err.message).toBe(
        'bot "demo": module ./broken.mjs has a syntax error at ./broken.mjs:3:15: Unexpected token',
      );
      expect(err.cause).toBeUndefined();
    });
  });
});

describe("describeLoadError with Node's own errors", () => {
  // vitest runs import() through its own module loader, so Node's native error comes from a child.
  async function nativeImportError(file: string): Promise<Error> {
    const script =
      "import(process.argv[1]).then(() => console.log('{}'), (e) => console.log(JSON.stringify({ name: e.name, message: e.message, stack: e.stack })))";
    const { stdout } = await execFileAsync(process.execPath, [
      "--input-type=module",
      "-e",
      script,
      pathToFileURL(file).href,
    ]);
    const { name, message, stack } = JSON.parse(stdout) as { name: string; message: string; stack: string };
    expect(name).toBe("SyntaxError");
    // Its own stack (Node's frames), not one made here in the test's file.
    return Object.assign(new SyntaxError(message), { stack });
  }
  const folder = modulesFolder("bothost-native-", {
    "broken.mjs": "export default {\n  setup() {\n    const x = ;\n  },\n};\n",
    "bad-link.mjs": "import { nothing } from './esm.mjs';\nexport default { setup: nothing };\n",
    "esm.mjs": "export default {};\n",
  });
  const describeNative = async (name: string) => {
    const file = path.join(folder(), name);
    return describeLoadError(
      await nativeImportError(file),
      file,
      `./${name}`,
      createJiti(import.meta.url),
      folder(),
    );
  };

  it("keeps Node's message for a syntax error and adds the position", async () => {
    expect(await describeNative("broken.mjs")).toBe(
      "has a syntax error at ./broken.mjs:3:15: Unexpected token ';'",
    );
  });

  it("does not call a missing named export a syntax error", async () => {
    expect(await describeNative("bad-link.mjs")).toBe(
      "could not be loaded: The requested module './esm.mjs' does not provide an export named 'nothing'",
    );
  });
});
