/**
 * A bot whose `setup` throws (a bad cron expression, a filter key typo, a command argument that is
 * not a zod schema), as the CLI reports it: `bothost check` finds it offline, `bothost dev` keeps
 * the running version when an edit brings it, each as one line naming the bot, its file and the
 * problem, never a stack trace. Also: `bothost dev` on a config with no sandbox bot prints only
 * its error. A refused declaration is named by its file:line:column in the bot's module.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliProcess, hasStackTrace, runCli, spawnCli } from "../support/cli.ts";
import { initProject } from "../support/init-project.ts";

let dir: string;
let project: string;
let file: string;
let source: string;
let dev: CliProcess | undefined;

beforeAll(async () => {
  ({ dir, project } = await initProject("setup-problems"));
  file = path.join(project, "bots", "hello.ts");
  source = await readFile(file, "utf8");
});
afterAll(async () => {
  dev?.kill("SIGKILL");
  await dev?.exited;
  await rm(dir, { recursive: true, force: true });
});

/** hello.ts with `line` added at the top of its setup. */
const withLine = (line: string) => source.replace("setup(bot) {\n", `setup(bot) {\n    ${line}\n`);

const PROBLEMS = [
  [
    "a filter key typo",
    'bot.on("message", { chanel: "general" }, () => {});',
    /chanel.*\[ROUTER_INVALID_FILTER\]$/,
  ],
  [
    "a bad cron expression",
    'bot.cron("*/5 * * *", {}, () => {});',
    /bot\.cron\("\*\/5 \* \* \*"\).*\[BOT_SETUP_INVALID\]$/,
  ],
  [
    "a command argument that is not a zod schema",
    'bot.command("x", { args: { x: 5 as never } }, () => {});',
    /\bx\b.*\[BOT_SETUP_INVALID\]$/,
  ],
] as const;

describe("bothost check", () => {
  it.each(PROBLEMS)("reports %s thrown in setup, exit 2", async (_what, line, problem) => {
    await writeFile(file, withLine(line));
    const { code, stdout, stderr } = await runCli(["check"], { cwd: project });
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    const lines = stderr.trimEnd().split("\n");
    expect(lines).toEqual([expect.stringMatching(/^bothost check: bots\.hello \(\.\/bots\/hello\.ts\): /)]);
    expect(lines[0]).toMatch(problem);
    // The refused call's place in the bot's file: the line withLine added, at the method's name.
    const added = source.split("\n").findIndex((l) => l.includes("setup(bot) {")) + 2;
    expect(lines[0]).toContain(`): bots/hello.ts:${added}:9: `);
    expect(hasStackTrace(stderr)).toBe(false);
  });

  // The transform hoists an import written after code, cramming the lines between onto its line.
  it.each([
    ["an import after the code", 4, ""],
    ["the imports first", 5, 'import fs from "node:fs";\n'],
  ])(
    "names the line and column a setup threw at in the module's own source, with %s",
    async (_what, line, first) => {
      await writeFile(
        file,
        `import { defineBot } from "bothost";\n${first}export default defineBot({
  setup(bot) {
    if (!ok()) throw new TypeError("setup refuses on purpose");
    bot.on("message", (ctx) => ctx.reply("x"));
  },
});
${first ? "" : 'import fs from "node:fs";\n'}function ok(): boolean { return fs.existsSync("/nonexistent"); }
`,
      );
      for (const run of ["made", "from the transpile cache"]) {
        const { code, stderr } = await runCli(["check"], { cwd: project });
        expect({ run, code, stderr }).toEqual({
          run,
          code: 1,
          stderr: `bothost check: bots.hello (./bots/hello.ts): setup threw TypeError at bots/hello.ts:${line}:22: setup refuses on purpose\n`,
        });
      }
    },
  );

  it("still passes the project as bothost init wrote it", async () => {
    await writeFile(file, source);
    const { code, stdout } = await runCli(["check"], { cwd: project });
    expect(code).toBe(0);
    expect(stdout).toContain("The bot is ready.");
  });
});

/** The non-empty lines written so far. */
const lines = (text: string) => text.split("\n").filter((l) => l.trim() !== "");
const chatLine = /^Chat with your bots: http:\/\/127\.0\.0\.1:\d+\/chat\/$/;

/**
 * A daemon process and two CLI processes: on a loaded 2-core machine that takes 20 s and more,
 * past vitest's default 20 s.
 */
describe("bothost reload", { timeout: 60_000 }, () => {
  it("is refused with exit 2 when an edit's setup throws; the bot keeps running", async () => {
    await writeFile(file, source);
    const run = spawnCli(["run"], { cwd: project });
    try {
      await run.waitForLog((l) => l.msg === "daemon started");
      await writeFile(file, withLine(PROBLEMS[1][1]));
      const reload = await runCli(["reload"], { cwd: project });
      expect(reload.code).toBe(2);
      expect(reload.stderr.split("\n").slice(0, 2)).toEqual([
        "bothost reload: the daemon refused the new config and keeps the old one:",
        expect.stringMatching(
          /^bots\.hello \(\.\/bots\/hello\.ts\): bots\/hello\.ts:\d+:9: bot\.cron\("\*\/5 \* \* \*"\)/,
        ),
      ]);
      expect(hasStackTrace(reload.stderr + run.stdout() + run.stderr())).toBe(false);
      const status = await runCli(["status", "--json"], { cwd: project });
      expect(JSON.parse(status.stdout).bots).toEqual([
        expect.objectContaining({ name: "hello", state: "running" }),
      ]);
    } finally {
      run.kill("SIGTERM");
      await run.exited;
      await writeFile(file, source);
    }
  });
});

/**
 * Its cases wait up to 30 s for \`bothost dev\` to start and 10 s for each reload: their budget is
 * above the sum, so a slow start fails at the wait that names it, not at vitest's default 20 s,
 * which would leave the case running on beside the next one, both editing the same file.
 */
describe("bothost dev", { timeout: 120_000 }, () => {
  it("keeps the running version when an edit's setup throws, and says so in one line per problem", async () => {
    await writeFile(file, source);
    dev = spawnCli(["dev"], { cwd: project });
    await expect.poll(() => dev!.stdout(), { timeout: 30_000 }).toMatch(/Chat with your bots: /);

    for (const [, line, problem] of PROBLEMS.slice(1)) {
      const before = dev.stdout().length;
      await writeFile(file, withLine(line));
      await expect
        .poll(() => lines(dev!.stdout().slice(before)).at(-1), { timeout: 10_000 })
        .toMatch(chatLine);
      const out = dev.stdout().slice(before);
      const refused = out.split("\n");
      const at = refused.findIndex((l) =>
        l.endsWith(
          "ERROR: the edit does not load, so the bots keep running as they were; saving the file again reloads it:",
        ),
      );
      expect(at).toBeGreaterThanOrEqual(0);
      expect(refused[at + 1]).toMatch(/^bots\.hello \(\.\/bots\/hello\.ts\): /);
      expect(refused[at + 1]).toMatch(problem);
      expect(out).not.toMatch(/bot failed to start|config reloaded/);
      expect(hasStackTrace(dev.stdout() + dev.stderr())).toBe(false);
      const status = await runCli(["status", "--json"], { cwd: project });
      expect(JSON.parse(status.stdout).bots).toEqual([
        expect.objectContaining({ name: "hello", state: "running" }),
      ]);
    }

    // The next good save is applied.
    const from = dev.stdout().length;
    await writeFile(file, source);
    await expect.poll(() => dev!.stdout().slice(from), { timeout: 10_000 }).toMatch(/INFO: config reloaded/);
  });

  it("started with a bot whose setup throws, keeps watching, and the next good save starts it", async () => {
    dev?.kill("SIGKILL");
    await dev?.exited;
    await writeFile(file, withLine('bot.cron("*/5 * * *", {}, () => {});'));
    dev = spawnCli(["dev"], { cwd: project });
    await expect.poll(() => dev!.stdout(), { timeout: 30_000 }).toMatch(/Chat with your bots: /);
    expect(dev.stdout()).toMatch(/0 bots running on the embedded sandbox\. hello did not start \(above\)\./);
    const from = dev.stdout().length;
    await writeFile(file, source);
    await expect.poll(() => dev!.stdout().slice(from), { timeout: 10_000 }).toMatch(/INFO: config reloaded/);
    await expect
      .poll(async () => JSON.parse((await runCli(["status", "--json"], { cwd: project })).stdout).bots, {
        timeout: 10_000,
      })
      .toEqual([expect.objectContaining({ name: "hello", state: "running" })]);
  });

  it("on a config with no sandbox bot prints only its error, exit 2", async () => {
    const real = path.join(project, "real.yaml");
    await writeFile(
      real,
      "server:\n  url: http://127.0.0.1:9\nstate:\n  path: ./.real-state\nbots:\n  hello:\n    module: ./bots/hello.ts\n    email: hello-bot@example.com\n    api_key: abcdefghijklmnopqrstuvwxyz012345\n",
    );
    const { code, stdout, stderr } = await runCli(["dev", "-c", "real.yaml"], { cwd: project });
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    expect(stderr).toBe(
      `bothost dev: ${real} runs no bot on the embedded sandbox; set server.url: sandbox (see "bothost init").\n`,
    );
  });
});
