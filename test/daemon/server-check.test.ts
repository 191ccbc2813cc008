/**
 * The start's server check costs requests only when there is something to compare: a first start
 * (nothing recorded with the state) makes the one registration its queue needs and records the
 * server from it; a restart on that state registers once more to compare, and deletes that queue.
 * The bots a daemon starts together on one server share that registration, and each still
 * compares what it finds with its own state.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import type { Daemon } from "../../src/daemon/daemon.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { readServerIdentity, writeServerIdentity } from "../../src/state/server-identity.ts";
import { startInProcessDaemon } from "../../src/testing/in-process-daemon.ts";
import { requestsSince } from "../support/bot-daemon.ts";

const BOT = "bot@sandbox.example";
const definition = {
  setup(bot: BotApi) {
    bot.on("message", () => {});
  },
} as BotDefinition;

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.stop();
  sandbox = undefined;
});

const queueCalls = (s: Sandbox, from: number) =>
  requestsSince(s, from).filter((r) => r === "POST /register" || r === "DELETE /events");

it("a first start registers once and records the server; a restart checks it with one more registration", async () => {
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  const stateDir = await mkdtemp(join(tmpdir(), "bothost-server-check-"));
  const first = await startInProcessDaemon(sandbox, { checked: { email: BOT, definition } }, { stateDir });
  expect(queueCalls(sandbox, 0)).toEqual(["POST /register"]);
  await first.stop();

  const store = await FileStore.open(stateDir);
  const recorded = await readServerIdentity(store.namespace("checked"));
  await store.close();
  expect(recorded).toMatchObject({ url: sandbox.url, realm_uuid: expect.any(String) });

  const mark = sandbox.control.requests.length;
  const again = await startInProcessDaemon(sandbox, { checked: { email: BOT, definition } }, { stateDir });
  await sandbox.control.waitFor(() => queueCalls(sandbox!, mark).length === 3);
  expect(queueCalls(sandbox, mark)).toEqual(["POST /register", "DELETE /events", "POST /register"]);
  await again.stop();
  await rm(stateDir, { recursive: true, force: true });
});

const SECOND = "second@sandbox.example";

/** A sandbox with a second bot account, and a state folder in which both bots started once. */
async function twoBotsStartedOnce() {
  sandbox = await startSandbox({ heartbeatSeconds: 1 });
  sandbox.control.createUser({
    email: SECOND,
    full_name: "Second",
    bot: "generic",
    owner: "owner@sandbox.example",
  });
  const stateDir = await mkdtemp(join(tmpdir(), "bothost-server-check-"));
  const bots = { checked: { email: BOT, definition }, second: { email: SECOND, definition } };
  await (await startInProcessDaemon(sandbox, bots, { stateDir })).stop();
  return { stateDir, bots };
}

it("the bots a daemon starts together on one server check it with one registration", async () => {
  const { stateDir, bots } = await twoBotsStartedOnce();
  const mark = sandbox!.control.requests.length;
  const again = await startInProcessDaemon(sandbox!, bots, { stateDir });
  await sandbox!.control.waitFor(() => queueCalls(sandbox!, mark).includes("DELETE /events"));
  // One look at the server (a registration and its deletion), then each bot's queue.
  expect(queueCalls(sandbox!, mark).sort()).toEqual([
    "DELETE /events",
    "POST /register",
    "POST /register",
    "POST /register",
  ]);
  await again.stop();
  await rm(stateDir, { recursive: true, force: true });
});

it("a bot whose state belongs to another server is refused, on the look it shares", async () => {
  const { stateDir, bots } = await twoBotsStartedOnce();
  const store = await FileStore.open(stateDir);
  const recorded = await readServerIdentity(store.namespace("second"));
  await writeServerIdentity(store.namespace("second"), { ...recorded!, realm_uuid: "another-organization" });
  await store.close();
  const mark = sandbox!.control.requests.length;
  let daemon: Daemon | undefined;
  const started = startInProcessDaemon(sandbox!, bots, { stateDir, created: (d) => (daemon = d) });
  await expect(started).rejects.toMatchObject({ code: "STATE_SERVER_MISMATCH" });
  await expect(started).rejects.toThrow(/bot "second": .*realm_uuid another-organization/);
  // The shared look, and the queue of the bot whose state matches.
  expect(queueCalls(sandbox!, mark).filter((r) => r === "POST /register")).toHaveLength(2);
  await daemon?.stop();
  await rm(stateDir, { recursive: true, force: true });
});

it("a bot whose key is rejected while it looks for the others: they look for themselves", async () => {
  const { stateDir, bots } = await twoBotsStartedOnce();
  const mark = sandbox!.control.requests.length;
  const rejected = { ...bots, checked: { ...bots.checked, apiKey: "not-the-key-of-this-bot-000000000" } };
  const again = await startInProcessDaemon(sandbox!, rejected, { stateDir });
  expect(again.report).toMatchObject({ started: ["second"], authFailed: ["checked"] });
  const registers = (email: string) =>
    sandbox!.control.requests.slice(mark).filter((r) => r.email === email && r.path === "/register");
  // Its own look, then its queue.
  expect(registers(SECOND)).toHaveLength(2);
  await again.stop();
  await rm(stateDir, { recursive: true, force: true });
});
