/**
 * startDaemon, the documented way to run the daemon from code: a config file, real bots over real
 * HTTP against the sandbox, status, and a clean stop.
 */
import { existsSync } from "node:fs";
import { cp, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.ts";
import { deadLetterOfficeFor } from "../../src/daemon/dead-letter-office-for.ts";
import { ConfigError, startDaemon } from "../../src/index.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";

const REPLIER = fileURLToPath(new URL("../fixtures/e2e/replier.mjs", import.meta.url));
const BOT = "replier-bot@sandbox.example";
let sandbox: Sandbox;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox();
  sandbox.control.createUser({
    email: BOT,
    full_name: "Replier",
    bot: "generic",
    owner: "owner@sandbox.example",
    channels: ["general"],
  });
  dir = await mkdtemp(path.join(tmpdir(), "bothost-start-daemon-"));
});
afterAll(async () => {
  await sandbox.stop();
  await rm(dir, { recursive: true, force: true });
});

it("starts the configured bots, which answer; reports status; stops", async () => {
  const file = path.join(dir, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: ${sandbox.url}\nstate:\n  path: ./state\nbots:\n  replier:\n    module: ${REPLIER}\n    email: ${BOT}\n    api_key: ${sandbox.control.apiKeyOf(BOT)}\n`,
  );
  const daemon = await startDaemon({ config: file, logLevel: "silent" });
  try {
    expect(daemon.started).toEqual(["replier"]);
    expect(daemon.failed).toEqual([]);
    // The admin socket is there without any http: in the config.
    expect(daemon.adminSocket).toBe(path.join(dir, "state", "admin.sock"));
    expect(existsSync(daemon.adminSocket!)).toBe(true);
    const id = sandbox.control.sendAs("member@sandbox.example", {
      type: "stream",
      to: "general",
      topic: "t",
      content: "task one",
    }).id;
    await expect
      .poll(() =>
        sandbox.control.messages().some((m) => String(m.content).startsWith(`handled ${id} by replier`)),
      )
      .toBe(true);
    const status = await daemon.status();
    expect(status.bots).toMatchObject([
      {
        name: "replier",
        state: "running",
        handled: expect.any(Number),
        queueAgeSeconds: expect.any(Number),
        lastEventAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    ]);
  } finally {
    await daemon.stop();
  }
  expect(sandbox.control.queues()).toEqual([]);
  expect(existsSync(path.join(dir, "state", "admin.sock"))).toBe(false);
  // Stopped, not a spare on standby: no other instance runs it.
  expect((await daemon.status()).bots).toMatchObject([{ name: "replier", state: "stopped" }]);
});

it("rejects an invalid config with a located ConfigError, starting nothing", async () => {
  const file = path.join(dir, "broken.yaml");
  await writeFile(
    file,
    `server:\n  url: ${sandbox.url}\nbots:\n  replier:\n    module: ${REPLIER}\n    email: not-an-email\n    api_key: x\n`,
  );
  const error = await startDaemon({ config: file, logLevel: "silent" }).catch((err: unknown) => err);
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as ConfigError).format()).toMatch(/broken\.yaml:6:\d+ bots\.replier\.email/);
  expect(sandbox.control.queues()).toEqual([]);
});

// A reload compares with the listener and store the daemon still runs, not with an edit it could
// not apply: an http or state edit undone before a restart asks for none.
it("an http or state edit undone before a restart leaves nothing waiting for one", async () => {
  const file = path.join(dir, "bothost.yaml");
  const config = (listen: string, state: string) =>
    `server:\n  url: ${sandbox.url}\nstate:\n  path: ${state}\nhttp:\n  listen: ${listen}\n` +
    `bots:\n  replier:\n    module: ${REPLIER}\n    email: ${BOT}\n    api_key: ${sandbox.control.apiKeyOf(BOT)}\n`;
  await writeFile(file, config("127.0.0.1:0", "./state"));
  const daemon = await startDaemon({ config: file, logLevel: "silent" });
  try {
    await writeFile(file, config("127.0.0.1:1", "./elsewhere"));
    expect(await daemon.reload()).toMatchObject({ keep: ["replier"], needRestart: ["state", "http"] });
    await writeFile(file, config("127.0.0.1:0", "./state"));
    expect(await daemon.reload()).toMatchObject({ keep: ["replier"], needRestart: [] });
    // The listener the daemon started with still answers.
    expect((await fetch(`${daemon.url}/healthz`)).status).toBe(200);
  } finally {
    await daemon.stop();
  }
});

// The daemon reloads the file it was started with: a reload with that file gone says to put it
// back, not to name another file with --config as a start would.
it("a reload with the config file gone is refused, saying to put the file back", async () => {
  const file = path.join(dir, "gone.yaml");
  await writeFile(
    file,
    `server:\n  url: ${sandbox.url}\nstate:\n  path: ./gone-state\n` +
      `bots:\n  replier:\n    module: ${REPLIER}\n    email: ${BOT}\n    api_key: ${sandbox.control.apiKeyOf(BOT)}\n`,
  );
  const daemon = await startDaemon({ config: file, logLevel: "silent" });
  try {
    await rename(file, `${file}.away`);
    const refused = await daemon.reload().catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems.map((p) => p.message)).toEqual([
      expect.stringMatching(
        /^cannot be read: there is no such file; a reload reads the file the daemon was started with: put it back there/,
      ),
    ]);
    expect((refused as Error).message).not.toContain("name another file");
  } finally {
    await daemon.stop();
  }
});

// A rejected key shows one piece of advice everywhere, and it works: a reload reads the key file
// again, the bot's entry changes, and the reload restarts it.
it("a bot whose key is rejected says to fix the key and reload, and a reload brings it back", async () => {
  const file = path.join(dir, "rejected.yaml");
  const keyFile = path.join(dir, "replier.key");
  await writeFile(keyFile, "B".repeat(32));
  await writeFile(
    file,
    `server:\n  url: ${sandbox.url}\nstate:\n  path: ./rejected-state\nhttp:\n  listen: 127.0.0.1:0\n` +
      `bots:\n  replier:\n    module: ${REPLIER}\n    email: ${BOT}\n    api_key_file: ${keyFile}\n`,
  );
  const daemon = await startDaemon({ config: file, logLevel: "silent" });
  try {
    const advice = expect.stringMatching(/^the server rejected the bot's credentials: .*, then reload;/);
    expect(daemon.failed).toEqual([{ name: "replier", reason: advice }]);
    const status = (await daemon.status()).bots.find((b) => b.name === "replier");
    const ready = (await (await fetch(`${daemon.url}/readyz`)).json()) as {
      bots: { bot: string; reason?: string }[];
    };
    expect(ready.bots).toEqual([expect.objectContaining({ bot: "replier", reason: status?.reason })]);
    expect(status?.reason).toEqual(advice);
    await writeFile(keyFile, sandbox.control.apiKeyOf(BOT));
    expect(await daemon.reload()).toMatchObject({ restart: ["replier"], failed: [] });
    expect((await daemon.status()).bots.find((b) => b.name === "replier")?.state).toBe("running");
  } finally {
    await daemon.stop();
  }
});

/** The letters a process killed now would leave: its state files copied as they are on disk. */
async function lettersOnDisk(config: string, state: string): Promise<string[]> {
  const copy = await mkdtemp(path.join(tmpdir(), "bothost-killed-"));
  for (const name of ["state.json", "state.log"])
    if (existsSync(path.join(state, name))) await cp(path.join(state, name), path.join(copy, name));
  const store = await FileStore.open(copy);
  try {
    const letters = await deadLetterOfficeFor(await loadConfig(config), store).list();
    return letters.map((l) => l.id);
  } finally {
    await store.close();
    await rm(copy, { recursive: true, force: true });
  }
}

it("an operator's drop of a dead letter is on disk when the daemon answers it", async () => {
  const file = path.join(dir, "letters.yaml");
  const state = path.join(dir, "letters-state");
  await writeFile(
    file,
    `server:\n  url: ${sandbox.url}\nstate:\n  path: ${state}\nhttp:\n  listen: 127.0.0.1:0\n` +
      `bots:\n  replier:\n    module: ${REPLIER}\n    email: ${BOT}\n    api_key: ${sandbox.control.apiKeyOf(BOT)}\n`,
  );
  const seeded = await FileStore.open(state);
  await deadLetterOfficeFor(await loadConfig(file), seeded)
    .of("replier")
    .add({
      source: "queue",
      event: { type: "message", id: 1 },
      error: new Error("boom"),
      attempts: 5,
      firstFailedAt: "2026-11-25T10:00:00.000Z",
      lastFailedAt: "2026-11-25T10:01:00.000Z",
    });
  await seeded.close();
  const daemon = await startDaemon({ config: file, logLevel: "silent" });
  try {
    const dropped = await fetch(`${daemon.url}/admin/failed/drop`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ids: ["replier/1"] }),
    });
    expect(await dropped.json()).toEqual({ done: ["replier/1"], missing: [] });
    expect(await lettersOnDisk(file, state)).toEqual([]);
  } finally {
    await daemon.stop();
  }
});
