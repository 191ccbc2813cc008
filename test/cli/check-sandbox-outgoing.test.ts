/**
 * `bothost check` on the embedded sandbox, for an outgoing-webhook bot: an org file account that
 * would never reach the bot (not an outgoing-webhook bot, or another token than the config's) is
 * said, naming both files' settings and never a token; `bothost run` warns of it at start.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { hasStackTrace, killAll, runCli, spawnCli } from "../support/cli.ts";
import { initProject } from "../support/init-project.ts";

const TOKEN = "HelperServiceToken0123456789abcd";
const OTHER = "OtherServiceToken0123456789abcde";

let dir: string;
let project: string;
let org: string;

beforeAll(async () => {
  ({ dir, project } = await initProject("check-outgoing"));
  const config = path.join(project, "bothost.yaml");
  await writeFile(
    path.join(project, "bots", "helper.ts"),
    'import { defineBot } from "bothost";\nexport default defineBot({ setup(bot) { bot.on("message", (ctx) => ctx.reply("hi")); } });\n',
  );
  await writeFile(
    config,
    `${await readFile(config, "utf8")}  helper:\n    module: ./bots/helper.ts\n    email: helper-bot@sandbox.example\n    outgoing_webhook:\n      path: /hooks/helper\n      token: \${HELPER_TOKEN}\nhttp:\n  listen: 127.0.0.1:0\n`,
  );
  org = await readFile(path.join(project, "org.yaml"), "utf8");
});
afterAll(async () => {
  await killAll();
  await rm(dir, { recursive: true, force: true });
});

/** org.yaml with the helper's account added as `entry` says. */
const withHelper = (entry: string) =>
  writeFile(
    path.join(project, "org.yaml"),
    org.replace(
      "bots:\n",
      `bots:\n  - { email: helper-bot@sandbox.example, full_name: Helper, owner: owner@sandbox.example, ${entry} }\n`,
    ),
  );
const check = () => runCli(["check"], { cwd: project, env: { HELPER_TOKEN: TOKEN } });

it("an account whose token is not the config's is refused, the tokens not shown", {
  timeout: 30_000,
}, async () => {
  await withHelper(`type: outgoing, outgoing: { url: "http://127.0.0.1:1/hooks/helper", token: ${OTHER} }`);
  const { code, stdout, stderr } = await check();
  expect(code).toBe(1);
  expect(stdout).toContain("1 of 2 bots cannot run; the reasons follow on stderr.");
  expect(stderr).toBe(
    "bothost check: helper: the outgoing token of helper-bot@sandbox.example in the org file (server.sandbox.org) is not bots.helper.outgoing_webhook.token: every delivery would be refused 401; give the account the same token (outgoing: { token })\n",
  );
  expect(stdout + stderr).not.toContain(TOKEN);
  expect(stdout + stderr).not.toContain(OTHER);
  expect(hasStackTrace(stdout + stderr)).toBe(false);
});

it("an account that is no outgoing-webhook bot is refused", { timeout: 30_000 }, async () => {
  await withHelper("type: generic");
  const { code, stderr } = await check();
  expect(code).toBe(1);
  expect(stderr).toBe(
    "bothost check: helper: helper-bot@sandbox.example is not an outgoing-webhook bot on the embedded sandbox, so it is sent no deliveries: give it type: outgoing in the org file (server.sandbox.org), with outgoing: { url, token }\n",
  );
});

it("the same token passes", { timeout: 30_000 }, async () => {
  await withHelper(`type: outgoing, outgoing: { url: "http://127.0.0.1:1/hooks/helper", token: ${TOKEN} }`);
  const { code, stdout, stderr } = await check();
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  expect(stdout).toContain("All 2 bots are ready.");
});

it("bothost run warns of it at start, the bot running all the same, the tokens not shown", {
  timeout: 30_000,
}, async () => {
  await withHelper(`type: outgoing, outgoing: { url: "http://127.0.0.1:1/hooks/helper", token: ${OTHER} }`);
  const daemon = spawnCli(["run"], { cwd: project, env: { HELPER_TOKEN: TOKEN } });
  const warned = await daemon.waitForLog((l) => String(l.msg).startsWith("the embedded sandbox's account"));
  expect(warned).toMatchObject({
    level: 40,
    bot: "helper",
    problem: expect.stringContaining("is not bots.helper.outgoing_webhook.token"),
  });
  await daemon.waitForLog((l) => l.msg === "daemon started");
  expect(daemon.stdout() + daemon.stderr()).not.toContain(OTHER);
  expect(daemon.stdout() + daemon.stderr()).not.toContain(TOKEN);
  daemon.child.kill("SIGTERM");
  expect((await daemon.exited).code).toBe(0);
});
