// biome-ignore-all lint/suspicious/noTemplateCurlyInString: fixture values are ${VAR} references.
/**
 * `bothost run` on every malformed or hostile config under test/fixtures/config/ (and bad bot
 * modules): exit code 2, the loader's exact located problems on stderr and nothing on stdout, no
 * stack trace, no secret. The messages themselves are pinned by test/config's snapshots; this
 * proves the CLI prints exactly them, each located at file:line:column.
 */

import { readdirSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withSettingsProblems } from "../../src/bot/load-bots.ts";
import { isConfigError } from "../../src/config/config-error.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import { assertBuilt, hasStackTrace, runCli } from "../support/cli.ts";

const FIXTURES = "test/fixtures/config";
const files = readdirSync(FIXTURES)
  .filter((f) => f.endsWith(".yaml"))
  .sort();
/** The same fake environment as test/config/load-config-hostile.test.ts. */
const ENV: Record<string, string> = {
  ECHO_BOT_API_KEY: "echo-fake-key-from-env-0008",
  BROKEN_URL: "not a url at all",
  NAME: "x",
  GREETER_API_KEY: "greeter-fake-key-0030",
  BOOM_API_KEY: "boom-fake-key-0031",
};
/** Fake secrets inside the fixtures or their environment; none may ever be printed. */
const SECRETS = [
  "echo-fake-key-from-env-0008",
  "literal-fake-key-0004",
  "literal-fake-key-0005",
  "fake-key-0007",
  "first-half-of-key",
  "zuliprc-fake-key-0003",
  "webhook-fake-token-0006",
  "greeter-fake-key-0030",
  "boom-fake-key-0031",
  "short-fake-token-0020",
];

function expectClean(output: string): void {
  expect(hasStackTrace(output)).toBe(false);
  for (const secret of SECRETS) expect(output).not.toContain(secret);
}

beforeAll(assertBuilt);

describe.concurrent("bothost run on malformed and hostile config files", () => {
  it("has at least 20 fixtures to try", () => {
    expect(files.length).toBeGreaterThanOrEqual(20);
  });

  it.for(files)("%s: exit 2 with the exact located problems", async (name) => {
    const file = path.join(FIXTURES, name);
    // What run reports: the file's problems, and those of its bots' modules and settings.
    const err = await loadConfig(file, { env: ENV }).then(
      () => undefined,
      (e: unknown) => withSettingsProblems(e),
    );
    if (!isConfigError(err)) throw new Error(`${name} should be an invalid config, got ${String(err)}`);
    const { code, stdout, stderr } = await runCli(["run", "--config", file], { env: ENV });
    expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: "", stderr: `${err.format()}\n` });
    for (const line of stderr.trimEnd().split("\n")) {
      expect(line.startsWith(`${file}:`) && /^\S+:\d+:\d+ \S/.test(line), line).toBe(true);
    }
    expectClean(stderr);
  });
});

describe.concurrent("bothost run on configs whose bots are bad", () => {
  it("names every bad setting and missing module, located", async () => {
    const file = "test/fixtures/bots/bad-settings.yaml";
    const { code, stdout, stderr } = await runCli(["run", "--config", file], { env: ENV });
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    expect(stderr).toMatchInlineSnapshot(`
      "test/fixtures/bots/bad-settings.yaml:9:7 bots.greeter.settings.greting: is not a setting of this bot: did you mean "greeting"?
      test/fixtures/bots/bad-settings.yaml:10:18 bots.greeter.settings.threshold: must be a number, not text (remove the quotes)
      test/fixtures/bots/bad-settings.yaml:11:13 bots.greeter.settings.mode: must be one of strict, lenient, not "STRICT": did you mean "strict"?
      test/fixtures/bots/bad-settings.yaml:12:22 bots.greeter.settings.webhook_token: must be at least 40 characters long
      test/fixtures/bots/bad-settings.yaml:13:17 bots.greeter.settings.channels: must be a list, not text
      test/fixtures/bots/bad-settings.yaml:14:3 bots.missing-threshold.settings.threshold: is missing: add it
      test/fixtures/bots/bad-settings.yaml:22:5 bots.no-schema.settings: is set, but the bot's module declares no settings schema: remove it, or add settings: z.object({ … }) to the module
      test/fixtures/bots/bad-settings.yaml:27:23 bots.async.settings.name: is taken: pick another name
      test/fixtures/bots/bad-settings.yaml:29:13 bots.lost.module: ./no-such-bot.ts was not found (no file test/fixtures/bots/no-such-bot.ts): check the path; it starts at the config file's folder (MODULE_NOT_FOUND)
      "
    `);
    expectClean(stderr);
  });

  it("reports a module that throws while loading, by bot and module", async () => {
    const file = "test/fixtures/e2e/module-throws.yaml";
    const { code, stdout, stderr } = await runCli(["run", "--config", file], { env: ENV });
    expect({ code, stdout, stderr }).toEqual({
      code: 2,
      stdout: "",
      stderr:
        'bothost: bot "boom": module ../bots/throws-on-load.ts threw while loading at ../bots/throws-on-load.ts:2:7: cannot start: DATABASE_URL is not set [MODULE_LOAD_FAILED]\n',
    });
  });
});

describe("bothost run on the embedded sandbox, its bots unable to run", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "bothost-e2e-sandbox-"));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  /** `bothost run` in `dir` on a config of `bots` (YAML lines under `bots:`) on the embedded sandbox. */
  const run = async (name: string, bots: string[]) => {
    await writeFile(path.join(dir, name), ["server: { url: sandbox }", "bots:", ...bots, ""].join("\n"));
    return runCli(["run", "--config", name], { cwd: dir });
  };

  it("a bot the sandbox has no account for: exit 2, its email located, no bot started", async () => {
    const echo = path.resolve("bots/echo.ts");
    const result = await run("account.yaml", [
      "  echo:",
      `    module: ${echo}`,
      "    email: bot@sandbox.example",
      "  ghost:",
      `    module: ${echo}`,
      "    email: ghost-bot@sandbox.example",
    ]);
    expect(result).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "account.yaml:8:12 bots.ghost.email: the embedded sandbox has no account ghost-bot@sandbox.example: add it to the org file (server.sandbox.org), or fix the email\n",
    });
  });

  it("no bot can start: exit 1, and stderr names each bot with why", async () => {
    const broken =
      'export default {\n  setup(): void {\n    throw new TypeError("the token is missing");\n  },\n};\n';
    await writeFile(path.join(dir, "broken.ts"), broken);
    const { code, stderr } = await run("setup.yaml", [
      "  broken:",
      "    module: ./broken.ts",
      "    email: bot@sandbox.example",
    ]);
    expect({ code, stderr }).toEqual({
      code: 1,
      stderr: expect.stringMatching(
        /^bothost: no bot could start, so the daemon stops:\n {2}broken: it failed to start: its code threw TypeError at \S*broken\.ts:3:11: the token is missing\n$/,
      ),
    });
    expect(hasStackTrace(stderr)).toBe(false);
  });
});

describe.concurrent("bothost run on config files that cannot be read", () => {
  let dir = "";
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("a missing file", async () => {
    const result = await runCli(["run", "--config", `${FIXTURES}/no-such-file.yaml`]);
    expect(result).toEqual({
      code: 2,
      stdout: "",
      stderr: `${FIXTURES}/no-such-file.yaml: cannot be read: there is no such file; create it (see config.example.yaml), or name another file with --config FILE or BOTHOST_CONFIG\n`,
    });
  });

  it("a folder", async () => {
    const result = await runCli(["run", "--config", FIXTURES]);
    expect(result).toEqual({
      code: 2,
      stdout: "",
      stderr: `${FIXTURES}: cannot be read: it is a folder, not a file; give the path of a readable YAML file\n`,
    });
  });

  it("a file over the 1 MiB cap, named by $BOTHOST_CONFIG", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "bothost-e2e-huge-"));
    await writeFile(path.join(dir, "huge.yaml"), `bots:\n${"  # padding\n".repeat(100_000)}`);
    const result = await runCli(["run"], { cwd: dir, env: { BOTHOST_CONFIG: "huge.yaml" } });
    expect(result).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "huge.yaml: cannot be read: it is larger than 1048576 bytes; config files are limited to 1 MiB\n",
    });
  });
});
