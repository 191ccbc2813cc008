/**
 * The start's server check costs requests only when there is something to compare: a first start
 * (nothing recorded with the state) makes the one registration its queue needs and records the
 * server from it; a restart on that state registers once more to compare, and deletes that queue.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { BotApi } from "../../src/bot/bot-api.ts";
import type { BotDefinition } from "../../src/bot/define-bot.ts";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import { readServerIdentity } from "../../src/state/server-identity.ts";
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
