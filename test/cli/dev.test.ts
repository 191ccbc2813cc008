/**
 * `bothost dev` in a project made by `bothost init`, read as a person reads it (no browser: the
 * chat page itself is tested in test/browser/dev-chat.test.ts): readable log lines, the chat
 * page's address last, and an edit that does not load reported with what happens next.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type CliProcess, spawnCli } from "../support/cli.ts";
import { initProject } from "../support/init-project.ts";

let dir: string;
let project: string;
let dev: CliProcess | undefined;

beforeAll(async () => {
  ({ dir, project } = await initProject("dev-cli"));
});
afterAll(async () => {
  dev?.kill("SIGKILL");
  await dev?.exited;
  await rm(dir, { recursive: true, force: true });
});

const chatLine = /^Chat with your bots: http:\/\/127\.0\.0\.1:\d+\/chat\/$/;
/** The non-empty lines written so far. */
const lines = (text: string) => text.split("\n").filter((l) => l.trim() !== "");

/**
 * Each case waits up to 30 s for \`bothost dev\` to start and 10 s for each reload: its budget is
 * above the sum, so a slow start fails at the wait that names it, not at vitest's default 20 s,
 * which would leave the case running on beside the next one, both editing the same project.
 */
const BUDGET = { timeout: 120_000 };

it(
  "logs readable lines, prints the chat page's address last, and says a broken edit waits for the next save",
  BUDGET,
  async () => {
    dev = spawnCli(["dev"], { cwd: project });
    await expect.poll(() => dev!.stdout(), { timeout: 30_000 }).toMatch(/Chat with your bots: /);
    const started = lines(dev.stdout());
    // Readable lines even though stdout is a pipe here: no JSON log line.
    expect(started.filter((l) => l.startsWith("{"))).toEqual([]);
    expect(started.some((l) => /^\[[\d:.]+\] INFO: daemon started$/.test(l))).toBe(true);
    expect(started.slice(-2)).toEqual([
      "1 bot running on the embedded sandbox. Saving the config or a bot's files reloads; Ctrl-C stops.",
      expect.stringMatching(chatLine),
    ]);

    const file = path.join(project, "bots", "hello.ts");
    const source = await readFile(file, "utf8");
    let before = dev.stdout().length;
    await writeFile(file, `${source}\nexport const = ;\n`);
    await expect.poll(() => lines(dev!.stdout().slice(before)).at(-1), { timeout: 10_000 }).toMatch(chatLine);
    const refused = dev.stdout().slice(before);
    expect(refused).toContain(
      "ERROR: the edit does not load, so the bots keep running as they were; saving the file again reloads it:\n" +
        'bot "hello": module ./bots/hello.ts has a syntax error at ./bots/hello.ts:',
    );
    expect(refused).not.toContain("start again");

    before = dev.stdout().length;
    await writeFile(file, source.replace('const greeting = "Hello";', 'const greeting = "Howdy";'));
    await expect.poll(() => lines(dev!.stdout().slice(before)).at(-1), { timeout: 10_000 }).toMatch(chatLine);
    expect(dev.stdout().slice(before)).toMatch(/INFO: config reloaded/);

    dev.kill("SIGINT");
    expect((await dev.exited).code).toBe(0);
    dev = undefined;
  },
);

it(
  "started with a bot file that does not compile, says where and waits for the save that fixes it",
  BUDGET,
  async () => {
    const file = path.join(project, "bots", "hello.ts");
    const source = await readFile(file, "utf8");
    await writeFile(file, `${source}\nexport const = ;\n`);
    const at = source.split("\n").length + 1;
    dev = spawnCli(["dev"], { cwd: project });
    await expect.poll(() => dev!.stdout(), { timeout: 30_000 }).toMatch(/Waiting for an edit/);
    expect(dev.stdout()).toBe(
      "Waiting for an edit: saving the config or a bot's files tries again; Ctrl-C stops.\n",
    );
    expect(dev.stderr()).toMatch(
      new RegExp(
        `^bothost dev: bot "hello": module \\./bots/hello\\.ts has a syntax error at \\./bots/hello\\.ts:${at}:\\d+: .*\\[MODULE_LOAD_FAILED\\]\n$`,
      ),
    );

    await writeFile(file, source);
    await expect.poll(() => dev!.stdout(), { timeout: 30_000 }).toMatch(/Chat with your bots: /);
    expect(lines(dev.stdout()).slice(-2)).toEqual([
      "1 bot running on the embedded sandbox. Saving the config or a bot's files reloads; Ctrl-C stops.",
      expect.stringMatching(chatLine),
    ]);
    dev.kill("SIGINT");
    expect((await dev.exited).code).toBe(0);
    dev = undefined;
  },
);

it("reloads when a local file a bot imports changes, or the config file", BUDGET, async () => {
  const bots = path.join(project, "bots");
  await writeFile(path.join(bots, "greeting.ts"), 'export const greeting = "Hello";\n');
  const hello = path.join(bots, "hello.ts");
  const source = await readFile(hello, "utf8");
  await writeFile(
    hello,
    source.replace(/const greeting = "\w+";/, 'import { greeting } from "./greeting.ts";'),
  );
  dev = spawnCli(["dev"], { cwd: project });
  await expect.poll(() => dev!.stdout(), { timeout: 30_000 }).toMatch(/Chat with your bots: /);
  expect(dev.stdout()).toContain("Saving the config or a bot's files reloads; Ctrl-C stops.");

  /** Write `file`, wait for the chat line that follows the reload, and return what was logged. */
  const edit = async (file: string, text: string) => {
    const before = dev!.stdout().length;
    await writeFile(file, text);
    await expect.poll(() => lines(dev!.stdout().slice(before)).at(-1), { timeout: 10_000 }).toMatch(chatLine);
    return dev!.stdout().slice(before);
  };
  // The imported file: hello restarts with it.
  const imported = await edit(path.join(bots, "greeting.ts"), 'export const greeting = "Howdy";\n');
  expect(imported).toMatch(/INFO: a file changed: reloading/);
  expect(imported).toMatch(/INFO: config reloaded[\s\S]*restarted: \[\s*"hello"\s*\]/);

  // The config file: a changed bot entry restarts the bot.
  const configFile = path.join(project, "bothost.yaml");
  const config = await readFile(configFile, "utf8");
  const withTimeout = config.replace(/^( {4}email: .*)$/m, "$1\n    handler_timeout: 20s");
  expect(withTimeout).not.toBe(config);
  const reloaded = await edit(configFile, withTimeout);
  expect(reloaded).toMatch(/INFO: config reloaded[\s\S]*restarted: \[\s*"hello"\s*\]/);

  // A bot added with an email the sandbox has no account for: refused, located at that email.
  const ghost = `${withTimeout.trimEnd()}\n  ghost:\n    module: ./bots/hello.ts\n    email: ghost-bot@sandbox.example\n`;
  const refused = await edit(configFile, ghost);
  const at = ghost.split("\n").findIndex((l) => l.includes("ghost-bot@")) + 1;
  expect(refused).toContain(
    `bothost.yaml:${at}:12 bots.ghost.email: the embedded sandbox has no account ghost-bot@sandbox.example: add it to the org file (server.sandbox.org), or fix the email`,
  );
  expect(refused).not.toMatch(/INFO: config reloaded/);

  // The org file: read at start only, which the first edit says, once; nothing reloads for it.
  const orgFile = path.join(project, "org.yaml");
  const org = await readFile(orgFile, "utf8");
  const beforeOrg = dev.stdout().length;
  await writeFile(orgFile, `${org}\n`);
  const orgLine =
    /WARN: the org file changed: the embedded sandbox reads it at start, so the change takes effect when bothost dev is restarted/g;
  await expect.poll(() => dev!.stdout().slice(beforeOrg), { timeout: 10_000 }).toMatch(orgLine);
  await writeFile(orgFile, org);
  // A config edit after it: its reload's chat line follows the second org edit's event.
  await edit(configFile, withTimeout);
  const afterOrg = dev.stdout().slice(beforeOrg);
  expect(afterOrg.match(orgLine)).toHaveLength(1);
  expect(afterOrg.match(/a file changed: reloading/g)).toHaveLength(1);

  dev.kill("SIGINT");
  expect((await dev.exited).code).toBe(0);
  dev = undefined;
});
