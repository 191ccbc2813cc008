/**
 * `bothost check` on the embedded sandbox with an `api_key` the config gives that is not the
 * account's: the refusal says what fixes it there (remove the key, or give the org file's account
 * that key), not to download a zuliprc from a server that has none; the key is not shown.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { hasStackTrace, runCli } from "../support/cli.ts";
import { initProject } from "../support/init-project.ts";

const WRONG = "NotTheAccountsKey0123456789abcde";

let dir: string;
let project: string;

beforeAll(async () => {
  ({ dir, project } = await initProject("check-sandbox-key"));
  const config = path.join(project, "bothost.yaml");
  const text = await readFile(config, "utf8");
  const email = "    email: hello-bot@sandbox.example\n";
  expect(text).toContain(email);
  await writeFile(config, text.replace(email, `${email}    api_key: \${HELLO_KEY}\n`));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("a key that is not the account's says to remove it or put it in the org file", {
  timeout: 30_000,
}, async () => {
  const { code, stdout, stderr } = await runCli(["check"], { cwd: project, env: { HELLO_KEY: WRONG } });
  expect(code).toBe(3);
  expect(stdout).toContain("1 of 1 bots cannot run; the reasons follow on stderr.");
  expect(stderr).toMatch(
    /^bothost check: hello: the embedded sandbox refused the API key bots\.hello gives for hello-bot@sandbox\.example \(401 UNAUTHORIZED: [^)]+\)\. Remove it \(the bot then signs in with its account's key\), or give the account that key in the org file \(server\.sandbox\.org: api_key\)\.\n$/,
  );
  expect(stdout + stderr).not.toContain(WRONG);
  expect(hasStackTrace(stdout + stderr)).toBe(false);
});
