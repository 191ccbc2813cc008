/**
 * `bothost dialogs` with no daemon running, on state an older version wrote (the version before
 * dialog logs: one record per dialog, under its first message's id), as an operator runs it after
 * installing the new version and before its first start (docs/operations/upgrading.md: let the
 * waiting dialogs end, deploy when none waits). The record is listed as the start will take it
 * up, and left as it is. The CLI runs as a subprocess; the config names a sandbox over HTTP.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/start-sandbox.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { FileStore } from "../../src/state/file-store.ts";
import type { JsonValue } from "../../src/state/state-store.ts";
import { assertBuilt, runCli } from "../support/cli.ts";

const BOT = "order-bot@sandbox.example";
const HOUR = 3_600_000;

let sandbox: Sandbox;
let dir: string;
let file: string;
let memberId: number;
const startedAt = Date.now() - 60_000;

/** A dialog the older version kept waiting at its second question ("How many?"), as it wrote it. */
function record(member: { user_id: number; full_name: string }, bot: number): JsonValue {
  const origin = { id: 57, sender_id: member.user_id, content: "order", timestamp: startedAt / 1000 };
  return {
    v: 1,
    id: "57",
    userId: member.user_id,
    userName: member.full_name,
    conversation: `dm:${Math.min(member.user_id, bot)},${Math.max(member.user_id, bot)}`,
    where: "direct message",
    origin: { type: "message", message: origin, flags: [], id: 0 },
    startedAt,
    steps: [
      {
        question: "Which size: small or large?",
        askedAt: startedAt + 1_000,
        deadline: startedAt + 24 * HOUR,
        answers: [{ id: 60, content: "large", timestamp: startedAt / 1000 + 5 }],
      },
      { question: "How many?", askedAt: startedAt + 6_000, deadline: startedAt + 48 * HOUR, answers: [] },
    ],
    waiting: true,
    values: [],
    effects: [
      { n: 1, kind: "send", result: { id: 58 } },
      { n: 2, kind: "send", result: { id: 61 } },
    ],
  };
}

beforeAll(async () => {
  assertBuilt();
  sandbox = await startSandbox();
  const bot = sandbox.control.createUser({
    email: BOT,
    full_name: "Orders",
    bot: "generic",
    owner: "owner@sandbox.example",
  });
  const member = sandbox.control.users().find((u) => u.email === "member@sandbox.example")!;
  memberId = member.user_id;
  dir = await mkdtemp(join(tmpdir(), "bothost-dialogs-v1-"));
  const store = await FileStore.open(join(dir, "state"));
  await store.namespace("orders").namespace("dialogs").set("57", record(member, bot.user_id));
  await store.close();
  file = join(dir, "bothost.yaml");
  await writeFile(
    file,
    `server:\n  url: ${sandbox.url}\nstate:\n  path: ./state\nbots:\n` +
      `  orders:\n    module: ./orders.ts\n    email: ${BOT}\n    api_key: \${ORDERS_KEY}\n`,
  );
});

afterAll(async () => {
  await sandbox?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("lists a dialog an older version kept waiting, before the new version's first start, and writes nothing", {
  timeout: 60_000,
}, async () => {
  const json = await runCli(["dialogs", "--json", "-c", file]);
  expect(json).toMatchObject({
    code: 0,
    stderr: "No daemon answers: the open dialogs as the state store keeps them.\n",
  });
  expect(JSON.parse(json.stdout)).toEqual([
    {
      bot: "orders",
      dialogs: [
        {
          id: "57",
          userId: memberId,
          userName: "Mel Member",
          where: "direct message",
          step: 2,
          since: new Date(startedAt).toISOString(),
          deadline: new Date(startedAt + 48 * HOUR).toISOString(),
        },
      ],
    },
  ]);

  const text = await runCli(["dialogs", "--bot", "orders", "-c", file]);
  expect(text.code).toBe(0);
  expect(text.stdout).toContain("orders: 1 open dialog\n");
  expect(text.stdout).toMatch(/^ {2}57 +Mel Member +direct message +2 /m);

  // Nothing was rewritten: the record is there for the start to take up.
  const store = await FileStore.open(join(dir, "state"));
  const dialogs = store.namespace("orders").namespace("dialogs");
  expect(((await dialogs.get("57")) as { v: number }).v).toBe(1);
  expect(await dialogs.list("h:")).toEqual([]);
  await store.close();
});
