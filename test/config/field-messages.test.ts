/**
 * A refused field's message says what the value must be, as the others do ("must be …"), not
 * only a description of the allowed values.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { isConfigError } from "../../src/config/config-error.ts";
import { loadConfig } from "../../src/config/load-config.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "bothost-field-messages-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

it.each([["!!!!"], ["_"], ["@"]])(
  "command_prefix %s: must be 1 to 3 characters, naming those refused",
  async (prefix) => {
    const file = path.join(dir, "bothost.yaml");
    await writeFile(
      file,
      `server: { url: sandbox }\nbots:\n  hello:\n    module: ./x.ts\n    email: hello-bot@sandbox.example\n    command_prefix: "${prefix}"\n`,
    );
    const err = await loadConfig(file).catch((e: unknown) => e);
    expect(isConfigError(err) && err.format()).toBe(
      `${file}:6:21 bots.hello.command_prefix: must be 1 to 3 characters, none a letter, digit, _, space, @, * or \`, like "!"`,
    );
  },
);
