/**
 * `bothost failed` on the letters of a bot no longer in the config (removed or renamed): listed,
 * marked as such, shown and dropped, retry refused with the reason; with the daemon stopped (the
 * state directory) and running (its admin routes over HTTP).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { runFailedCommand } from "../../src/cli/failed.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import { deadLetterOfficeFor } from "../../src/daemon/dead-letter-office-for.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { assertBuilt, runCli } from "../support/cli.ts";
import { failedRun } from "../support/dead-letter.ts";
import { freePort } from "../support/free-port.ts";

let dir: string;
beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), "bothost-failed-gone-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const bot = (name: string, email: string) =>
  `  ${name}:\n    module: ./${name}.ts\n    email: ${email}\n    api_key: ${name}-key-0123456789\n`;

async function writeConfig(name: string, state: string, bots: string[], head = ""): Promise<string> {
  const file = join(dir, `${name}.yaml`);
  const entries = bots.map((b) => bot(b, `${b}-bot@chat.example.org`)).join("");
  await writeFile(
    file,
    `server:\n  url: https://chat.example.org\nstate:\n  path: ${state}\n${head}bots:\n${entries}`,
  );
  return file;
}

const letter = failedRun;

/** Letters of `mod` and `old`, kept while both were configured. */
async function seed(state: string): Promise<void> {
  const config = await loadConfig(await writeConfig("both", state, ["mod", "old"]));
  const store = await FileStore.open(state);
  const office = deadLetterOfficeFor(config, store);
  await office.of("mod").add(letter(1));
  await office.of("old").add(letter(2));
  await office.of("old").add(letter(3));
  await store.close();
}

const TIMEOUT = { timeout: 60_000 };

describe("with the daemon stopped", TIMEOUT, () => {
  it("lists them marked, shows and drops them, refuses to retry them", async () => {
    const state = join(dir, "stopped");
    await seed(state);
    const file = await writeConfig("mod-only", state, ["mod"]);

    const json = await runCli(["failed", "list", "--json", "-c", file]);
    expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: "" });
    const listed = JSON.parse(json.stdout) as Array<{ id: string; unconfigured?: boolean }>;
    expect(listed.map((l) => [l.id, l.unconfigured ?? false])).toEqual([
      ["mod/1", false],
      ["old/1", true],
      ["old/2", true],
    ]);
    const table = await runCli(["failed", "list", "--bot", "old", "-c", file]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^old\/1 +queue +5 /m);
    expect(table.stdout).toContain(
      'The 2 letters of old belong to a bot no longer in the config: they cannot be retried ("bothost failed drop --all --bot old" deletes them).',
    );
    const shown = await runCli(["failed", "show", "old/2", "-c", file]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(
      "bot old is no longer in the config: this letter can be dropped, not retried",
    );

    const retry = await runCli(["failed", "retry", "old/1", "-c", file]);
    expect([retry.code, retry.stdout]).toEqual([1, ""]);
    expect(retry.stderr).toBe(
      "bothost failed: not retried: old/1: their bot is not in the config, so no bot would run them " +
        "(drop them, or add the bot back to retry them)\n",
    );
    const drop = await runCli(["failed", "drop", "--all", "--bot", "old", "-c", file]);
    expect(drop).toMatchObject({ code: 0, stdout: "Dropped 2: old/1, old/2\n" });
    const left = JSON.parse((await runCli(["failed", "list", "--json", "-c", file])).stdout) as Array<{
      id: string;
    }>;
    expect(left.map((l) => l.id)).toEqual(["mod/1"]);
  });

  it("letters kept before bots were recorded are found once listed while their bot was configured", async () => {
    const state = join(dir, "earlier");
    const store = await FileStore.open(state);
    // As a store written before the record of bots with letters: the letter alone, at its key.
    const stored = { ...letter(4), id: "old/1", bot: "old", error: { name: "Error", message: "boom 4" } };
    await store.namespace("old").namespace("dead-letters").set("e:000000000001", stored);
    await store.namespace("old").namespace("dead-letters").set("seq", 1);
    await store.close();
    const both = await writeConfig("earlier-both", state, ["mod", "old"]);
    expect((await runCli(["failed", "list", "-c", both])).stdout).toMatch(/^old\/1 +queue +5 /m);
    const file = await writeConfig("earlier-mod", state, ["mod"]);
    const listed = JSON.parse((await runCli(["failed", "list", "--json", "-c", file])).stdout) as Array<{
      id: string;
      unconfigured?: boolean;
    }>;
    expect(listed).toMatchObject([{ id: "old/1", unconfigured: true }]);
  });

  it("a bot never configured and with no letters is still an unknown bot", async () => {
    const state = join(dir, "unknown");
    await seed(state);
    const file = await writeConfig("unknown", state, ["mod"]);
    const r = await runCli(["failed", "list", "--bot", "nope", "-c", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no bot named "nope" in the config (bots: mod)');
  });
});

describe("with the daemon running", TIMEOUT, () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
    sandbox.control.createUser({
      email: "mod-bot@sandbox.example",
      full_name: "Mod",
      bot: "generic",
      owner: "owner@sandbox.example",
    });
  });
  afterAll(() => sandbox.stop());

  /** A daemon running `mod` on the state in `state`, and the CLI's config `<name>.yaml` for it. */
  async function startDaemon(state: string, name: string) {
    const port = await freePort();
    const running = await startInProcessDaemon(
      sandbox,
      { mod: { email: "mod-bot@sandbox.example", definition: defineBot({ setup: () => {} }) } },
      { stateDir: state, global: `http:\n  listen: 127.0.0.1:${port}` },
    );
    const file = join(dir, `${name}.yaml`);
    await writeFile(
      file,
      `server:\n  url: ${sandbox.url}\nstate:\n  path: ${state}\nhttp:\n  listen: 127.0.0.1:${port}\nbots:\n` +
        bot("mod", "mod-bot@sandbox.example"),
    );
    return { running, file };
  }

  it("its admin routes list them marked, drop them, and refuse to retry them", async () => {
    const state = join(dir, "running");
    await seed(state);
    const { running, file } = await startDaemon(state, "running");
    try {
      const json = await runCli(["failed", "list", "--json", "--bot", "old", "-c", file]);
      expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: "" });
      expect(
        (JSON.parse(json.stdout) as Array<{ id: string; unconfigured?: boolean }>).map((l) => l.id),
      ).toEqual(["old/1", "old/2"]);
      expect((await runCli(["failed", "show", "old/1", "-c", file])).stdout).toContain(
        "bot old is no longer in the config",
      );
      const retry = await runCli(["failed", "retry", "--all", "--bot", "old", "-c", file]);
      expect(retry.code).toBe(1);
      expect(retry.stderr).toContain("not retried: old/1, old/2: their bot is not in the config");
      // The status counts them apart: no bot of the config has them.
      const status = await runCli(["status", "--json", "-c", file]);
      const parsed = JSON.parse(status.stdout) as { unconfiguredDeadLetters?: unknown; bots: unknown[] };
      expect(parsed.unconfiguredDeadLetters).toEqual({ old: 2 });
      expect(parsed.bots).toMatchObject([{ name: "mod", deadLetters: 1 }]);
      expect((await runCli(["status", "-c", file])).stdout).toContain(
        'Dead letters of bots no longer in the config: old (2); see "bothost failed list".',
      );
      const drop = await runCli(["failed", "drop", "old/1", "old/2", "-c", file]);
      expect(drop).toMatchObject({ code: 0, stdout: "Dropped 2: old/1, old/2\n" });
      expect((await running.daemon.letters.list()).map((l) => l.id)).toEqual(["mod/1"]);
    } finally {
      await running.stop();
    }
  });

  it("an id naming a bot no letter or config has is UNKNOWN_BOT, exit 2, as --bot, the daemon running or not", async () => {
    const state = join(dir, "unknown-id");
    await seed(state);
    const { running, file } = await startDaemon(state, "unknown-id");
    const said = async () => {
      for (const argv of [
        ["show", "mdo/1"],
        ["retry", "mdo/1"],
        ["drop", "mod/1", "mdo/1"],
      ]) {
        // In this process: what the command writes on stderr, and its exit code.
        const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
        const code = await runFailedCommand([...argv, "-c", file]);
        const printed = stderr.mock.calls.join("");
        stderr.mockRestore();
        expect([argv, code, printed]).toEqual([
          argv,
          2,
          'bothost failed: no bot named "mdo" in the config (bots: mod). Did you mean "mod"? [UNKNOWN_BOT]\n',
        ]);
      }
    };
    try {
      await said();
    } finally {
      await running.stop();
    }
    await said();
    // Refused before any was acted on: the known bot's letter is still there.
    const store = await FileStore.open(state);
    const office = deadLetterOfficeFor(await loadConfig(file), store);
    expect((await office.list("mod")).map((l) => l.id)).toEqual(["mod/1"]);
    await store.close();
  });

  it("--bot naming a bot no letter or config has is UNKNOWN_BOT, exit 2, as with the daemon stopped", async () => {
    const { running, file } = await startDaemon(join(dir, "running-unknown"), "running-unknown");
    try {
      for (const argv of [["list"], ["retry", "--all"], ["drop", "--all"]]) {
        // In this process: what the command writes on stderr, and its exit code.
        const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
        const code = await runFailedCommand([...argv, "--bot", "nope", "-c", file]);
        const printed = stderr.mock.calls.join("");
        stderr.mockRestore();
        expect([code, printed]).toEqual([
          2,
          'bothost failed: no bot named "nope" in the config (bots: mod) [UNKNOWN_BOT]\n',
        ]);
      }
    } finally {
      await running.stop();
    }
  });
});
