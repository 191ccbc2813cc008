/**
 * `bothost failed`, run as a subprocess: against the state directory when the daemon is stopped,
 * and through the running daemon's admin routes when it holds the directory.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { defineBot } from "../../src/bot/define-bot.ts";
import { loadConfig } from "../../src/config/load-config.ts";
import { deadLetterOfficeFor } from "../../src/daemon/dead-letter-office-for.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { assertBuilt, hasStackTrace, repoRoot, runCli } from "../support/cli.ts";
import { freePort } from "../support/free-port.ts";

const KEY = "mod-secret-key-0123456789";
/** Preloaded in a CLI process, it lists on stderr the files of node_modules the process loaded. */
const PACKAGES_LOADED = join(repoRoot, "test/fixtures/cli/packages-loaded.cjs");
let dir: string;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), "bothost-failed-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function writeConfig(name: string, extra = ""): Promise<string> {
  const file = join(dir, `${name}.yaml`);
  await writeFile(
    file,
    `server:\n  url: https://chat.example.org\nstate:\n  path: ${join(dir, name)}\n${extra}bots:\n` +
      `  mod:\n    module: ./mod.ts\n    email: mod-bot@chat.example.org\n    api_key: ${KEY}\n` +
      `  echo:\n    module: ./echo.ts\n    email: echo-bot@chat.example.org\n    api_key: echo-key-0123456789\n`,
  );
  return file;
}

const letter = (n: number, message = `boom ${n}`) => ({
  source: "queue" as const,
  event: { type: "message", id: n, message: { id: 100 + n, content: `hello ${n}` } },
  error: new Error(message),
  attempts: 5,
  firstFailedAt: "2026-11-25T10:00:00.000Z",
  lastFailedAt: "2026-11-25T10:01:00.000Z",
});

async function seed(file: string): Promise<void> {
  const config = await loadConfig(file);
  const store = await FileStore.open(config.state.path!);
  const office = deadLetterOfficeFor(config, store);
  await office.of("mod").add(letter(1, `the server refused key ${KEY}`));
  await office.of("mod").add(letter(2));
  await office.of("echo").add(letter(3));
  await store.close();
}

/**
 * A case runs up to six CLI processes one after another: on a loaded 2-core machine they take 20 s
 * and more, past vitest's default 20 s.
 */
const TIMEOUT = { timeout: 60_000 };

describe("with the daemon stopped: straight in the state directory", TIMEOUT, () => {
  let file: string;
  beforeAll(async () => {
    file = await writeConfig("stopped");
    await seed(file);
  });

  it("list --json prints every letter with id, bot, error, attempts and event; no secret", async () => {
    const { code, stdout, stderr } = await runCli(["failed", "list", "--json", "-c", file]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    const letters = JSON.parse(stdout) as Array<Record<string, unknown>>;
    expect(letters.map((l) => [l.id, l.bot, l.attempts])).toEqual([
      ["mod/1", "mod", 5],
      ["mod/2", "mod", 5],
      ["echo/1", "echo", 5],
    ]);
    expect(letters[0]).toMatchObject({
      error: { message: "the server refused key [hidden]" },
      event: { id: 1 },
    });
    expect(stdout).not.toContain(KEY);
  });

  it("list prints a table, --bot narrows it, show prints one letter; no Redis client nor undici's index is loaded", async () => {
    const table = await runCli(["failed", "list", "--bot", "echo", "-c", file], {
      env: { NODE_OPTIONS: `--require ${PACKAGES_LOADED}` },
    });
    expect(table.stdout).toMatch(
      /^ID +SOURCE +ATTEMPTS +LAST FAILED +ERROR\necho\/1 +queue +5 +2026-11-25T10:01:00Z +boom 3\n$/,
    );
    // A config with its state on disk needs no Redis client: its code is not loaded. Nor is
    // undici's index (fetch, WebSocket…): asking the daemon takes one of its connections.
    const loaded = JSON.parse(/^modules loaded: (.*)$/m.exec(table.stderr)![1]!) as string[];
    expect(loaded).toContain("undici/lib/dispatcher/client.js");
    expect(loaded.filter((f) => f.startsWith("ioredis/") || f === "undici/index.js")).toEqual([]);
    const one = await runCli(["failed", "show", "mod/2", "-c", file]);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain("mod/2  (queue, 5 attempts");
    expect(one.stdout).toContain("Error: boom 2");
    expect(one.stdout).toContain('"content": "hello 2"');
  });

  it("a bot key kept in the service's environment, unset in this shell, is not needed", async () => {
    const unset = join(dir, "unset-key.yaml");
    const text = (await readFile(file, "utf8")).replace(KEY, "$" + "{BOTHOST_TEST_UNSET_KEY}");
    await writeFile(unset, text);
    const r = await runCli(["failed", "list", "--bot", "echo", "-c", unset]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/^echo\/1 +queue +5 /m);
  });

  it("retry marks letters for the next start; drop deletes; unknown ids exit 1", async () => {
    const retry = await runCli(["failed", "retry", "mod/2", "mod/7", "-c", file]);
    expect(retry.code).toBe(1);
    expect(retry.stdout).toContain(
      "Retry requested for 1: mod/2 (handled by the daemon running the bot, or at its next start)",
    );
    // The id it did not find goes to stderr, in the words `show` uses, not among what was done.
    expect(retry.stdout).not.toContain("mod/7");
    expect(retry.stderr).toBe('bothost failed: no dead letter mod/7 (see "bothost failed list")\n');
    const listed = JSON.parse((await runCli(["failed", "list", "--json", "-c", file])).stdout) as Array<
      Record<string, unknown>
    >;
    expect(listed.find((l) => l.id === "mod/2")?.retryRequestedAt).toEqual(expect.any(String));
    // The table keeps each letter's error and shows the pending retry in its own column.
    const pending = await runCli(["failed", "list", "--bot", "mod", "-c", file]);
    expect(pending.stdout).toMatch(
      /^ID +SOURCE +ATTEMPTS +LAST FAILED +RETRY +ERROR\nmod\/1 +queue +5 +\S+ +- +the server refused key \[hidden\]\nmod\/2 +queue +5 +\S+ +requested +boom 2\n$/,
    );

    const drop = await runCli(["failed", "drop", "--all", "--bot", "mod", "-c", file]);
    expect(drop).toMatchObject({ code: 0, stdout: "Dropped 2: mod/1, mod/2\n" });
    expect((await runCli(["failed", "list", "--bot", "mod", "-c", file])).stdout).toBe("No dead letters.\n");
  });

  it("usage mistakes exit 2 with one line, never a stack trace", async () => {
    for (const [args, message] of [
      [["failed"], "say what to do: list, show, retry or drop"],
      [["failed", "resend"], 'unknown action "resend" (known: list, show, retry, drop)'],
      [["failed", "retyr"], 'unknown action "retyr" (did you mean "retry"?)'],
      [["failed", "retry"], "retry needs ids (like moderator/12) or --all"],
      [["failed", "drop", "mod/1", "--all"], "drop takes ids or --all, not both"],
      [["failed", "show"], "show takes exactly one id"],
      [
        ["failed", "show", "bad-id"],
        "\"bad-id\" is no dead letter id: an id is the bot's name, a slash and the letter's number, like moderator/12",
      ],
      [["failed", "show", "mod/1/2"], '"mod/1/2" is no dead letter id'],
      [["failed", "retry", "mod/1", "mod"], '"mod" is no dead letter id'],
      [["failed", "drop", "mod/x"], '"mod/x" is no dead letter id'],
    ] as const) {
      const r = await runCli([...args, "-c", file]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(message);
      expect(hasStackTrace(r.stderr)).toBe(false);
    }
    const unknownBot = await runCli(["failed", "list", "--bot", "nope", "-c", file]);
    expect(unknownBot.code).toBe(2);
    expect(unknownBot.stderr).toContain('no bot named "nope" in the config (bots: mod, echo)');
  });
});

describe("with the daemon running: through its admin routes", TIMEOUT, () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
    sandbox.control.createUser({
      email: "echo-bot@sandbox.example",
      full_name: "Mod",
      bot: "generic",
      owner: "owner@sandbox.example",
    });
    sandbox.control.createUser({
      email: "other-bot@sandbox.example",
      full_name: "Other",
      bot: "generic",
      owner: "owner@sandbox.example",
    });
  });
  afterAll(() => sandbox.stop());

  const quiet = defineBot({ setup: () => {} });

  it("lists, retries and drops through a loopback listener", async () => {
    const port = await freePort();
    const stateDir = join(dir, "running");
    const running = await startInProcessDaemon(
      sandbox,
      {
        mod: { email: "echo-bot@sandbox.example", definition: quiet },
        // Its key is refused: configured, so its letters are kept, but it does not run here.
        other: { email: "other-bot@sandbox.example", definition: quiet, apiKey: "refused-key-0123456789" },
      },
      { stateDir, global: `http:\n  listen: 127.0.0.1:${port}` },
    );
    try {
      await running.daemon.letters.of("mod").add(letter(1));
      await running.daemon.letters.of("mod").add(letter(2));
      const file = join(dir, "running.yaml");
      await writeFile(
        file,
        `server:\n  url: ${sandbox.url}\nstate:\n  path: ${stateDir}\nhttp:\n  listen: 127.0.0.1:${port}\nbots:\n` +
          "  mod:\n    module: ./mod.ts\n    email: echo-bot@sandbox.example\n    api_key: any-key-0123456789\n",
      );
      const listed = await runCli(["failed", "list", "--json", "-c", file]);
      expect(listed.code, listed.stderr).toBe(0);
      expect((JSON.parse(listed.stdout) as Array<{ id: string }>).map((l) => l.id)).toEqual([
        "mod/1",
        "mod/2",
      ]);
      expect((await runCli(["failed", "show", "mod/9", "-c", file])).stderr).toContain(
        "no dead letter mod/9",
      );
      // An id of another shape than `<bot>/<n>` is a usage mistake, said before the daemon is asked.
      for (const id of ["mod", "mod/1/2"]) {
        const shown = await runCli(["failed", "show", id, "-c", file]);
        expect([shown.code, shown.stderr]).toEqual([
          2,
          expect.stringContaining(`"${id}" is no dead letter id`),
        ]);
      }
      const retry = await runCli(["failed", "retry", "mod/1", "-c", file]);
      expect(retry.stdout).toContain("Retry requested for 1: mod/1 (the daemon handles them now)");
      expect(await running.daemon.letters.of("mod").retryGeneration()).toBe(1);
      // A letter of a bot this daemon does not run waits for the daemon that runs it.
      await running.daemon.letters.of("other").add(letter(1));
      const both = await runCli(["failed", "retry", "mod/2", "other/1", "-c", file]);
      expect(both.stdout).toBe(
        "Retry requested for 1: mod/2 (the daemon handles them now)\n" +
          "Retry requested for 1: other/1 (handled by the daemon running the bot, or at its next start)\n",
      );
      expect((await running.daemon.letters.list("other")).map((l) => l.id)).toEqual(["other/1"]);
      // The bot handles the retried event (it has no handler to fail), so the letter leaves the list.
      await vi.waitFor(
        async () => expect((await running.daemon.letters.list()).map((l) => l.id)).toEqual(["other/1"]),
        {
          timeout: 10_000,
          interval: 100,
        },
      );
      expect((await runCli(["failed", "drop", "--all", "-c", file])).stdout).toBe("Dropped 1: other/1\n");
      expect(await running.daemon.letters.list()).toEqual([]);
    } finally {
      await running.stop();
    }
  });

  it("on a public interface the admin routes need the token, compared in full", async () => {
    const port = await freePort();
    const token = "admin-token-0123456789abcdef";
    const running = await startInProcessDaemon(
      sandbox,
      { mod: { email: "echo-bot@sandbox.example", definition: quiet } },
      { global: `http:\n  listen: 0.0.0.0:${port}\n  admin_token: ${token}` },
    );
    try {
      const url = `http://127.0.0.1:${port}/admin/failed`;
      expect((await fetch(url)).status).toBe(401);
      expect((await fetch(url, { headers: { authorization: `Bearer ${token.slice(0, -1)}` } })).status).toBe(
        401,
      );
      const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual([]);
    } finally {
      await running.stop();
    }
  });

  it("on a public interface without a token there are no admin routes", async () => {
    const port = await freePort();
    const running = await startInProcessDaemon(
      sandbox,
      { mod: { email: "echo-bot@sandbox.example", definition: quiet } },
      { global: `http:\n  listen: 0.0.0.0:${port}` },
    );
    try {
      expect((await fetch(`http://127.0.0.1:${port}/admin/failed`)).status).toBe(404);
      expect(running.logged("admin routes off")).toHaveLength(1);
    } finally {
      await running.stop();
    }
  });
});
