// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config values are ${VAR} references.
/**
 * `bothost check` as a subprocess against a sandbox in the test process: the table, the exit
 * codes (0 ready, 1 some bot failing, 2 invalid config, 3 every key rejected), old servers, the
 * embedded sandbox, an unreachable server. No API key is ever printed.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { OrgInput, Sandbox } from "../../src/sandbox/types.ts";
import { assertBuilt, hasStackTrace, repoRoot, runCli, spawnCli } from "../support/cli.ts";

const MODULE = path.join(repoRoot, "test/fixtures/e2e/replier.mjs");
const HOOK = path.join(repoRoot, "test/fixtures/e2e/inbound-hook.mjs");
const WRONG_KEY = "WrongKey0123456789abcdefWrongKey";

const org = (featureLevel?: number): OrgInput => ({
  realm: { name: "Check", host: "sandbox.example", ...(featureLevel ? { feature_level: featureLevel } : {}) },
  users: [
    { email: "owner@sandbox.example", full_name: "Olive Owner", role: "owner" },
    { email: "person@sandbox.example", full_name: "Pat Person" },
  ],
  bots: [
    { email: "echo-bot@sandbox.example", full_name: "Echo", owner: "owner@sandbox.example" },
    { email: "helper-bot@sandbox.example", full_name: "Helper", owner: "owner@sandbox.example" },
  ],
});

let sandbox: Sandbox | undefined;
let dir = "";

beforeAll(assertBuilt);
afterEach(async () => {
  await sandbox?.stop();
  sandbox = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = "";
});

/** Write a config; `keys` maps bot name to [email, key or undefined for the account's own]. */
async function configFor(url: string, bots: Record<string, [string, string?]>) {
  dir = await mkdtemp(path.join(tmpdir(), "bothost-check-"));
  const env: Record<string, string> = {};
  const lines = [`server:\n  url: ${url}`, "bots:"];
  for (const [name, [email, key]] of Object.entries(bots)) {
    const variable = `KEY_${name.toUpperCase()}`;
    env[variable] = key ?? sandbox!.control.apiKeyOf(email);
    lines.push(`  ${name}:\n    module: ${MODULE}\n    email: ${email}\n    api_key: \${${variable}}`);
  }
  const file = path.join(dir, "bothost.yaml");
  await writeFile(file, `${lines.join("\n")}\n`);
  return { file, env, secrets: [...Object.values(env), ...sandbox!.control.users().map((u) => u.api_key)] };
}

function expectNoSecrets(output: string, secrets: string[]): void {
  for (const secret of secrets) expect(output.includes(secret), "an API key was printed").toBe(false);
  expect(hasStackTrace(output)).toBe(false);
}

describe("bothost check", () => {
  it("prints one row per bot and exits 0 when every bot is ready", async () => {
    sandbox = await startSandbox({ org: org() });
    const { file, env, secrets } = await configFor(sandbox.url, {
      echo: ["echo-bot@sandbox.example"],
      helper: ["helper-bot@sandbox.example"],
      person: ["person@sandbox.example"],
    });
    const { code, stdout, stderr } = await runCli(["check", "--config", file], { env });
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toMatchInlineSnapshot(`
      "bot     user id  email                       is_bot  server version    feature level  server lacks
      echo    4        echo-bot@sandbox.example    yes     12.0-dev+sandbox  496            nothing
      helper  5        helper-bot@sandbox.example  yes     12.0-dev+sandbox  496            nothing
      person  3        person@sandbox.example      no      12.0-dev+sandbox  496            nothing

      All 3 bots are ready.
      Note: person signs in as a person, not a bot account; this works, but the server treats the messages as that person's.
      "
    `);
    expectNoSecrets(stdout + stderr, secrets);
    // A check changes nothing on the server: no queue, no message.
    expect(sandbox.control.queues()).toEqual([]);
    expect(sandbox.control.requests.map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      ...Array(3).fill("GET /server_settings"),
      ...Array(3).fill("GET /users/me"),
    ]);
  });

  it("names the bot whose key is rejected and exits 1 while the others are ready", async () => {
    sandbox = await startSandbox({ org: org() });
    const { file, env, secrets } = await configFor(sandbox.url, {
      echo: ["echo-bot@sandbox.example"],
      helper: ["helper-bot@sandbox.example", WRONG_KEY],
    });
    const { code, stdout, stderr } = await runCli(["check", "--config", file], { env });
    expect(code).toBe(1);
    expect(stdout).toMatchInlineSnapshot(`
      "bot     user id  email                       is_bot  server version    feature level  server lacks
      echo    4        echo-bot@sandbox.example    yes     12.0-dev+sandbox  496            nothing
      helper  -        helper-bot@sandbox.example  -       12.0-dev+sandbox  496            nothing

      1 of 2 bots cannot run; the reasons follow on stderr.
      "
    `);
    expect(stderr).toBe(
      `bothost check: helper: the server at ${sandbox.url} rejected the credentials of helper-bot@sandbox.example ` +
        "(401 UNAUTHORIZED: Invalid API key). Fix bots.helper's email or API key (or download a fresh zuliprc " +
        "from Settings → Bots), and check that the bot is active.\n",
    );
    expectNoSecrets(stdout + stderr, [...secrets, WRONG_KEY]);
  });

  it("exits 3 when every bot's credentials are rejected", async () => {
    sandbox = await startSandbox({ org: org() });
    const { file, env, secrets } = await configFor(sandbox.url, {
      echo: ["echo-bot@sandbox.example", WRONG_KEY],
      gone: ["nobody@sandbox.example", `${WRONG_KEY}2`],
    });
    const { code, stdout, stderr } = await runCli(["check", "--config", file], { env });
    expect(code).toBe(3);
    expect(stdout).toContain("2 of 2 bots cannot run");
    const rejected = (bot: string, email: string, why: string) =>
      `bothost check: ${bot}: the server at ${sandbox!.url} rejected the credentials of ${email} ` +
      `(401 UNAUTHORIZED: ${why}). Fix bots.${bot}'s email or API key (or download a fresh ` +
      "zuliprc from Settings → Bots), and check that the bot is active.\n";
    expect(stderr).toBe(
      rejected("echo", "echo-bot@sandbox.example", "Invalid API key") +
        rejected("gone", "nobody@sandbox.example", "Malformed API key"),
    );
    expectNoSecrets(stdout + stderr, [...secrets, WRONG_KEY, `${WRONG_KEY}2`]);
  });

  it("lists what an older server lacks, by feature level", async () => {
    sandbox = await startSandbox({ org: org(300) });
    const { file, env } = await configFor(sandbox.url, { echo: ["echo-bot@sandbox.example"] });
    const { code, stdout } = await runCli(["check", "--config", file], { env });
    expect(code).toBe(0);
    expect(stdout.split("\n")[1]).toBe(
      "echo  4        echo-bot@sandbox.example  yes     12.0-dev+sandbox  300            " +
        "user lookup by real email (FL 302), empty topic names (FL 334), editing saved snippets (FL 368), " +
        "message reports (FL 382), channel folders (FL 389), bots updating user groups (FL 496)",
    );
  });

  it("starts the embedded sandbox for url: sandbox, and keys come from its accounts", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "bothost-check-"));
    const file = path.join(dir, "bothost.yaml");
    await writeFile(
      file,
      `server:\n  url: sandbox\nbots:\n  demo:\n    module: ${MODULE}\n    email: bot@sandbox.example\n  ghost:\n    module: ${MODULE}\n    email: ghost@sandbox.example\n`,
    );
    const { code, stdout, stderr } = await runCli(["check", "--config", file]);
    // A mistake in the config, as \`run\` refuses it (exit 2), yet every bot is checked and listed.
    expect(code).toBe(2);
    expect(stdout.split("\n").slice(0, 3)).toEqual([
      "bot    user id  email                  is_bot  server version    feature level  server lacks",
      "demo   4        bot@sandbox.example    yes     12.0-dev+sandbox  496            nothing",
      // The account is missing, yet the server answered what it is.
      "ghost  -        ghost@sandbox.example  -       12.0-dev+sandbox  496            nothing",
    ]);
    // Located at the email, in the words bothost run refuses it with.
    expect(stderr).toBe(
      `bothost check: ghost: ${file}:9:12 bots.ghost.email: the embedded sandbox has no account ghost@sandbox.example: add it to the org file (server.sandbox.org), or fix the email\n`,
    );
  });

  it("an invalid sandbox org file is an invalid config: located, exit 2 for check and run", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "bothost-check-"));
    const file = path.join(dir, "bothost.yaml");
    await writeFile(
      path.join(dir, "org.yaml"),
      "users:\n  - { email: a@sandbox.example, full_name: A, role: ownr }\n",
    );
    await writeFile(
      file,
      `server:\n  url: sandbox\n  sandbox: { org: ./org.yaml }\nstate:\n  path: ./state\nbots:\n  demo:\n    module: ${MODULE}\n    email: bot@sandbox.example\n`,
    );
    const [check, run] = await Promise.all([
      runCli(["check", "--config", file]),
      runCli(["run", "--config", file]),
    ]);
    for (const out of [check, run]) {
      expect(out.code).toBe(2);
      expect(out.stderr).toContain(
        `${path.join(dir, "org.yaml")}:2:47 users[0].role: must be one of owner, admin, moderator, member, guest, not "ownr": did you mean "owner"?`,
      );
      expect(hasStackTrace(out.stderr)).toBe(false);
    }
  });

  it("notes bots with commands that sign in as one account", async () => {
    sandbox = await startSandbox({ org: org() });
    dir = await mkdtemp(path.join(tmpdir(), "bothost-check-"));
    const file = path.join(dir, "bothost.yaml");
    const echo = path.join(repoRoot, "bots/echo.ts");
    const bot = (name: string, module: string, email: string) =>
      `  ${name}:\n    module: ${module}\n    email: ${email}\n    api_key: \${KEY}`;
    const shared = "echo-bot@sandbox.example";
    await writeFile(
      file,
      [
        `server:\n  url: ${sandbox.url}\nbots:`,
        bot("echo", echo, shared),
        bot("shouter", echo, shared),
        bot("counter", MODULE, shared), // no commands: it answers no command
        bot("helper", echo, "helper-bot@sandbox.example"),
        "",
      ].join("\n"),
    );
    const env = { KEY: sandbox.control.apiKeyOf(shared) };
    const { code, stdout, stderr } = await runCli(["check", "--config", file], { env });
    expect(code).toBe(1); // helper's key is echo's: rejected
    expect(stderr).toMatch(/^bothost check: helper: the server at .* rejected the credentials/);
    expect(stdout.split("\n").slice(-3)).toEqual([
      "1 of 4 bots cannot run; the reasons follow on stderr.",
      `Note: echo and shouter sign in as one account (${shared}) and have commands: run by one daemon they answer as one (\`help\` and typos of commands from echo); run by two, each would answer the other's commands as unknown.`,
      "",
    ]);
  });

  it("notes inbound webhooks that no listener serves, and run warns of them", async () => {
    sandbox = await startSandbox({ org: org() });
    const { file, env } = await configFor(sandbox.url, { hooks: ["echo-bot@sandbox.example"] });
    await writeFile(file, (await readFile(file, "utf8")).replace(MODULE, HOOK));
    const { code, stdout } = await runCli(["check", "--config", file], { env });
    expect(code).toBe(0);
    expect(stdout.split("\n").slice(-3)).toEqual([
      "The bot is ready.",
      'Note: hooks declares inbound webhooks (deploys), but the config has no http: listener, so they cannot be reached: add http: { listen: "127.0.0.1:8080" }.',
      "",
    ]);
    const run = spawnCli(["run", "--config", file], { env });
    const warned = await run.waitForLog((l) => l.msg === "daemon started" || Array.isArray(l.webhooks));
    expect(warned).toMatchObject({ level: 40, bot: "hooks", webhooks: ["deploys"] });
    expect(warned.msg).toMatch(/^the bot declares inbound webhooks, but the config has no http: listener/);
    run.kill("SIGTERM");
    await run.exited;
  });

  it("reports a server it cannot reach, and exits 1", async () => {
    sandbox = await startSandbox({ org: org() });
    // A port below the ephemeral range: no test's listen(0) is given it, so nothing answers there
    // (a port freed by a closed server could be another test's by the time it is dialled).
    const closed = 1;
    const { file, env } = await configFor(`http://127.0.0.1:${closed}`, {
      echo: ["echo-bot@sandbox.example"],
    });
    const { code, stderr } = await runCli(["check", "--config", file], { env });
    expect(code).toBe(1);
    expect(stderr).toMatch(
      new RegExp(
        `^bothost check: echo: GET /users/me: could not reach the server at http://127\\.0\\.0\\.1:${closed}: .*ECONNREFUSED`,
      ),
    );
  });
});

describe("bothost check on a setup that quotes a secret", () => {
  it("hides the password of the bot's settings in the setup's error", async () => {
    sandbox = await startSandbox({ org: org() });
    const { file, env } = await configFor(sandbox.url, { echo: ["echo-bot@sandbox.example"] });
    // fetch's Request refuses a URL with credentials, quoting the whole URL in its error.
    const module = path.join(dir, "hook.mjs");
    const zod = pathToFileURL(path.join(repoRoot, "node_modules/zod/index.js")).href;
    await writeFile(
      module,
      `import { z } from "${zod}";\n` +
        "export default { settings: z.object({ password: z.string() }), setup(bot, s) { new Request(`https://deploy:${s.password}@ci.example.org/go`); } };\n",
    );
    const text = (await readFile(file, "utf8")).replace(MODULE, module);
    await writeFile(file, `${text}    settings: { password: HookPassw0rdSecret }\n`);
    const { code, stderr } = await runCli(["check", "--config", file], { env });
    expect(code).toBe(1);
    expect(stderr).toContain("includes credentials: https://deploy:[hidden]@ci.example.org/go");
    expect(stderr).not.toContain("HookPassw0rdSecret");
  });
});

describe.concurrent("bothost check on invalid configs", () => {
  it.for(["unknown-keys-typos.yaml", "secret-leak-attempts.yaml", "missing-required.yaml"])(
    "%s: the same located problems as bothost run, exit 2",
    async (name) => {
      const file = `test/fixtures/config/${name}`;
      const env = { ECHO_BOT_API_KEY: "echo-fake-key-from-env-0008", BROKEN_URL: "not a url at all" };
      const [check, run] = await Promise.all([
        runCli(["check", "--config", file], { env }),
        runCli(["run", "--config", file], { env }),
      ]);
      expect(check).toEqual({ code: 2, stdout: "", stderr: run.stderr });
      expect(run.code).toBe(2);
      expect(check.stderr).toMatch(new RegExp(`^${file.replaceAll(".", "\\.")}:\\d+:\\d+ `));
      expectNoSecrets(check.stderr, [
        "echo-fake-key-from-env-0008",
        "literal-fake-key-0004",
        "fake-key-0007",
      ]);
    },
  );
});
