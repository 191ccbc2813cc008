/**
 * A bot's settings schema that throws while checking a value (a refinement of the module's own
 * that does not expect what the check before it refused): one located problem naming what was
 * thrown and where in the bot's code, exit 2 from `bothost check`, no stack trace and no secret.
 * Before, the load failed with `bothost: unexpected failure: TypeError: Invalid URL` and a stack.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, expect, it } from "vitest";
import { assertBuilt, hasStackTrace, repoRoot, runCli } from "../support/cli.ts";
import { problemsLoading } from "../support/load-problems.ts";

const MODULE = path.join(repoRoot, "test/fixtures/bots/throwing-settings.ts");
const SECRET = "s3cret-token-value-0123456789";
const config = [
  "server:\n  url: https://chat.example.org",
  "bots:",
  "  checker:",
  `    module: ${MODULE}`,
  "    email: checker-bot@chat.example.org",
  "    api_key: abc",
  "    settings:",
  `      api_token: ${SECRET}`,
  `      endpoint: "not a url ${SECRET}"`,
  "",
].join("\n");

beforeAll(assertBuilt);

it("is one problem at the bot's settings, naming what the schema threw and where", async () => {
  const problems = await problemsLoading(config);
  expect(problems).toHaveLength(1);
  const [problem] = problems;
  expect([problem?.line, problem?.path]).toEqual([8, "bots.checker.settings"]);
  expect(problem?.message).toMatch(
    /^could not be checked: the bot's settings schema threw TypeError: Invalid URL at test\/fixtures\/bots\/throwing-settings\.ts:9:\d+ /,
  );
  expect(problem?.message).not.toContain(SECRET);
});

it("makes `bothost check` exit 2 with that line, no stack trace", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "bothost-schema-throws-"));
  try {
    const file = path.join(dir, "bothost.yaml");
    await writeFile(file, config);
    const { code, stdout, stderr } = await runCli(["check", "--config", file], { cwd: repoRoot });
    expect(code).toBe(2);
    expect(stderr).toContain(
      "bots.checker.settings: could not be checked: the bot's settings schema threw TypeError",
    );
    expect(hasStackTrace(stdout + stderr)).toBe(false);
    expect(stdout + stderr).not.toContain(SECRET);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
