/**
 * A setup with several wrong declarations is reported whole: `bothost check`, `bothost run` and
 * `bothost commands` name every declaration bothost refuses (a bad timezone in `bot.recurring` no
 * longer hides a 4-field `bot.cron`), one line each, the one the setup stopped at first. A refusal
 * the setup catches itself is not one of them. `run` whose bots all fail so exits 2, as `check`.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasStackTrace, runCli } from "../support/cli.ts";
import { initProject } from "../support/init-project.ts";

let dir: string;
let project: string;
let file: string;
let source: string;

beforeAll(async () => {
  ({ dir, project } = await initProject("setup-every-refusal"));
  file = path.join(project, "bots", "hello.ts");
  source = await readFile(file, "utf8");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** hello.ts with `lines` added at the top of its setup. */
const withLines = (...lines: string[]) =>
  source.replace("setup(bot) {\n", `setup(bot) {\n${lines.map((l) => `    ${l}\n`).join("")}`);

const RECURRING =
  'bot.recurring("standup", { cron: "0 9 * * 1-5", timezone: "Europe/Berlinn", to: { channel: "general", topic: "standup" }, content: "Standup!" });';
const CRON = 'bot.cron("*/5 * * *", () => {});';
const FILTER = 'bot.on("message", { chanel: "general" }, () => {});';
const prefix = "bots.hello (./bots/hello.ts): ";

describe("a setup with several wrong declarations", () => {
  it("bothost check names each one, in the order the setup makes them, exit 2", async () => {
    await writeFile(file, withLines(RECURRING, CRON, FILTER));
    const { code, stdout, stderr } = await runCli(["check"], { cwd: project });
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    expect(stderr.trimEnd().split("\n")).toEqual([
      expect.stringMatching(
        /^bothost check: bots\.hello \(\.\/bots\/hello\.ts\): bots\/hello\.ts:12:9: bot\.recurring\("standup"\).*Europe\/Berlinn.*\[BOT_SETUP_INVALID\]$/,
      ),
      expect.stringMatching(
        /^bothost check: bots\.hello \(\.\/bots\/hello\.ts\): bots\/hello\.ts:13:9: bot\.cron\("\*\/5 \* \* \*"\).*\[BOT_SETUP_INVALID\]$/,
      ),
      expect.stringMatching(
        /^bothost check: bots\.hello \(\.\/bots\/hello\.ts\): bots\/hello\.ts:14:9: .*chanel.*\[ROUTER_INVALID_FILTER\]$/,
      ),
    ]);
    expect(hasStackTrace(stderr)).toBe(false);
  });

  it("leaves out a refusal the setup caught itself", async () => {
    await writeFile(file, withLines(`try { ${CRON} } catch { bot.log.warn("no cron job"); }`, FILTER));
    const { code, stderr } = await runCli(["check"], { cwd: project });
    expect(code).toBe(2);
    expect(stderr.trimEnd().split("\n")).toEqual([
      expect.stringMatching(/chanel.*\[ROUTER_INVALID_FILTER\]$/),
    ]);
  });

  it("bothost commands names each one, exit 2", async () => {
    await writeFile(file, withLines(RECURRING, CRON));
    const { code, stderr } = await runCli(["commands"], { cwd: project });
    expect(code).toBe(2);
    expect(stderr.trimEnd().split("\n")).toEqual([
      expect.stringMatching(
        /^bothost commands: bots\.hello: bots\/hello\.ts:12:9: bot\.recurring\("standup"\).*\[BOT_SETUP_INVALID\]$/,
      ),
      expect.stringMatching(
        /^bothost commands: bots\.hello: bots\/hello\.ts:13:9: bot\.cron\(.*\[BOT_SETUP_INVALID\]$/,
      ),
    ]);
  });

  it("bothost run's line of the failed start names each one; exit 2, as check's", async () => {
    await writeFile(file, withLines(RECURRING, CRON));
    const { code, stdout, stderr } = await runCli(["run"], { cwd: project });
    expect(code).toBe(2);
    const failed = `${stdout}\n${stderr}`
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === "bot failed to start");
    expect(failed?.error).toMatch(
      /^bot\.recurring\("standup"\).*\[BOT_SETUP_INVALID\] · bot\.cron\("\*\/5 \* \* \*"\).*\[BOT_SETUP_INVALID\]$/,
    );
    expect(String(failed?.error)).not.toContain(prefix);
  }, 60_000);
});
