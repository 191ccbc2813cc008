/**
 * A file with problems of its own and a bot whose settings its schema refuses: `run` and `check`
 * report both in one go (the settings are checked by the module, loaded as `run` loads it), exit 2.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, hasStackTrace, runCli } from "../support/cli.ts";

let dir: string;
let config: string;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(path.join(tmpdir(), "bothost-all-problems-"));
  const zod = JSON.stringify(path.resolve("node_modules/zod/index.js"));
  await writeFile(
    path.join(dir, "greeter.mjs"),
    `import { z } from ${zod};\nexport default { settings: z.object({ greeting: z.string() }), setup() {} };\n`,
  );
  config = path.join(dir, "bothost.yaml");
  await writeFile(
    config,
    [
      "server:",
      "  url: https://chat.example.org",
      "bots:",
      "  greeter:",
      "    module: ./greeter.mjs",
      "    email: greeter-bot@chat.example.org",
      "    api_key: fake-key-0123456789",
      "    concurrency: lots",
      "    handler_timeout: fast",
      "    settings: { greeting: 42 }",
      "  typo:",
      "    module: ./greeter.mjs",
      "    email: typo-bot@chat.example.org",
      "    api_key: fake-key-0123456789",
      "    setings: { greeting: hi }",
      "  other:",
      "    module: ./othr.mjs",
      "    email: other-bot@chat.example.org",
      "    api_key: fake-key-0123456789",
      "    concurrency: 0",
      "",
    ].join("\n"),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("a file with problems and a bot's settings its schema refuses", () => {
  it.each([["run"], ["check"]])("%s reports them together", async (command) => {
    const { code, stdout, stderr } = await runCli([command, "-c", config]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    const lines = stderr.trimEnd().split("\n");
    // The file's own problems, the settings the module's schema refuses, and a module path typo.
    expect(lines.filter((l) => l.startsWith(`${config}:`)).map((l) => l.split(" ")[1])).toEqual([
      "bots.greeter.concurrency:",
      "bots.greeter.handler_timeout:",
      "bots.greeter.settings.greeting:",
      // A typo of settings: said once, as the typo (not also as the module's missing settings).
      "bots.typo.setings:",
      "bots.other.module:",
      "bots.other.concurrency:",
    ]);
    expect(stderr).toContain(`${config}:10:27 bots.greeter.settings.greeting:`);
    expect(hasStackTrace(stderr)).toBe(false);
  });
});

describe("a file with problems and a bot module that does not load", () => {
  it.each([["run"], ["check"]])("%s reports them together, each located", async (command) => {
    await writeFile(path.join(dir, "throws.mjs"), 'throw new Error("no config yet");\n');
    await writeFile(path.join(dir, "broken.ts"), "export default { setup() { const a: number = ; } };\n");
    const file = path.join(dir, "modules.yaml");
    await writeFile(
      file,
      [
        "server:",
        "  url: https://chat.example.org",
        "log:",
        "  level: loud",
        "bots:",
        "  thrower:",
        "    module: ./throws.mjs",
        "    email: thrower-bot@chat.example.org",
        "    api_key: fake-key-0123456789",
        "  broken:",
        "    module: ./broken.ts",
        "    email: broken-bot@chat.example.org",
        "    api_key: fake-key-0123456789",
        "",
      ].join("\n"),
    );
    const { code, stdout, stderr } = await runCli([command, "-c", file]);
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    expect(
      stderr
        .trimEnd()
        .split("\n")
        .map((l) => l.split(": ")[0]),
    ).toEqual([
      `${file}:4:10 log.level`,
      `${file}:7:13 bots.thrower.module`,
      `${file}:11:13 bots.broken.module`,
    ]);
    expect(stderr).toContain(
      "bots.thrower.module: ./throws.mjs threw while loading at ./throws.mjs:1:7: no config yet",
    );
    expect(stderr).toContain("bots.broken.module: ./broken.ts has a syntax error at ./broken.ts:1:46");
    expect(hasStackTrace(stderr)).toBe(false);
  });
});
