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

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(path.join(tmpdir(), "bothost-module-typo-"));
  await mkdir(path.join(dir, "greeter-proj", "bots"), { recursive: true });
  await writeFile(path.join(dir, "greeter-proj", "bots", "greeter.ts"), "export default { setup() {} };\n");
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
