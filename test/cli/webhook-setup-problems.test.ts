/**
 * A `bot.webhook()` whose `verify` is wrong (its token read from a variable not set, a mistyped
 * type), as the CLI reports it: `bothost check` refuses it (exit 2) and `bothost run` does not
 * start the bot (exit 2 too, as no bot could start and each for a refused declaration), each naming the bot, its file and the field in
 * one line, with no stack trace and never the secret.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { hasStackTrace, killAll, runCli } from "../support/cli.ts";
import { initProject } from "../support/init-project.ts";

const SECRET = "s3cr3t-written-in-the-file";

let dir: string;
let project: string;
let file: string;
let source: string;

beforeAll(async () => {
  ({ dir, project } = await initProject("webhook-setup"));
  file = path.join(project, "bots", "hello.ts");
  source = await readFile(file, "utf8");
  const config = path.join(project, "bothost.yaml");
  await writeFile(config, `${await readFile(config, "utf8")}\nhttp:\n  listen: 127.0.0.1:0\n`);
});
// A daemon that started after all (the declaration not refused) is not left running.
afterEach(killAll);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** hello.ts with `line` added at the top of its setup. */
const withLine = (line: string) => source.replace("setup(bot) {\n", `setup(bot) {\n    ${line}\n`);

const WRONG = [
  [
    "a bearer token read from a variable not set",
    'bot.webhook("deploys", { verify: { type: "bearer", token: process.env.DEPLOY_TOKEN as string } }, () => {});',
    'bot.webhook("deploys").verify.token is required for type "bearer": a non-empty string; got nothing (undefined: a setting not set?). [BOT_SETUP_INVALID]',
  ],
  [
    "a mistyped verify type",
    `bot.webhook("deploys", { verify: { type: "hmc" as "hmac", secret: "${SECRET}" } }, () => {});`,
    'bot.webhook("deploys").verify.type "hmc" is not a verifier. Did you mean "hmac"? Use one of "github", "hmac", "slack", "bearer", "secret", "none". [BOT_SETUP_INVALID]',
  ],
] as const;

describe("a webhook declared wrongly", { timeout: 30_000 }, () => {
  it.each(WRONG)("%s: bothost check refuses it, exit 2", async (_what, line, problem) => {
    await writeFile(file, withLine(line));
    const { code, stdout, stderr } = await runCli(["check"], { cwd: project });
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    expect(stderr).toBe(`bothost check: bots.hello (./bots/hello.ts): bots/hello.ts:12:9: ${problem}\n`);
  });

  it.each(WRONG)("%s: bothost run does not start the bot, exit 2", async (_what, line, problem) => {
    await writeFile(file, withLine(line));
    const { code, stdout, stderr } = await runCli(["run"], { cwd: project });
    expect(code).toBe(2);
    const message = problem.replace(" [BOT_SETUP_INVALID]", "");
    expect(stderr).toBe(
      `bothost: no bot could start, so the daemon stops:\n  hello: it failed to start: bots/hello.ts:12:9: ${message}\n`,
    );
    const failed = stdout.split("\n").filter((l) => l.includes('"bot failed to start"'));
    expect(failed.map((l) => JSON.parse(l).error)).toEqual([problem]);
    expect(failed.map((l) => JSON.parse(l).at)).toEqual([["bots/hello.ts:12:9"]]);
    expect(stdout + stderr).not.toContain(SECRET);
    expect(hasStackTrace(stdout + stderr)).toBe(false);
  });
});

describe("a config's webhooks entry naming no webhook of the module", { timeout: 30_000 }, () => {
  const config = () => path.join(project, "bothost.yaml");
  // At the entry's place in the config, with the name meant.
  const problem =
    'bothost.yaml:LINE:7: bots.hello.webhooks.deploy in the config names no webhook of the bot\'s module (it declares deploys). Did you mean "deploys"? Use the name given to bot.webhook().';
  let plain: string;
  beforeAll(async () => {
    plain = await readFile(config(), "utf8");
  });
  afterAll(async () => {
    await writeFile(config(), plain);
  });
  const misnamed = async () => {
    await writeFile(file, withLine('bot.webhook("deploys", { verify: { type: "none" } }, () => {});'));
    // The bot's entry is the last of `bots:` before the http: added above: its webhooks go under it.
    const text = plain.replace(
      /(\n {4}email: [^\n]+)/,
      "$1\n    webhooks:\n      deploy: { idempotency_window: 2d }",
    );
    await writeFile(config(), text);
    return problem.replace(
      "LINE",
      String(text.split("\n").indexOf("      deploy: { idempotency_window: 2d }") + 1),
    );
  };

  it("bothost check refuses it as run does, exit 2", async () => {
    const problem = await misnamed();
    expect(await readFile(config(), "utf8")).toContain("\n    webhooks:\n      deploy:");
    const { code, stdout, stderr } = await runCli(["check"], { cwd: project });
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    expect(stderr).toBe(`bothost check: bots.hello (./bots/hello.ts): ${problem} [BOT_SETUP_INVALID]\n`);
  });

  it("bothost run does not start the bot, exit 2", async () => {
    const problem = await misnamed();
    const { code, stderr, stdout } = await runCli(["run"], { cwd: project });
    expect(stderr).toBe(
      `bothost: no bot could start, so the daemon stops:\n  hello: it failed to start: ${problem}\n`,
    );
    expect(code).toBe(2);
    expect(hasStackTrace(stdout + stderr)).toBe(false);
  });
});
