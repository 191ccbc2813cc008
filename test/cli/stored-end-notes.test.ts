/**
 * `bothost dialogs` with no daemon running, on a state store holding a dialog an operator ended
 * while the bot was down (or whose note's send the stop cut): its end note waits to be said at the
 * bot's next start. The listing says so (how many, for whom, of which dialog, where), in text and
 * in --json, rather than "No open dialogs.". The CLI runs as a subprocess; nothing is reached over
 * the network (the config's server is never called by the offline listing).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { FileStore } from "../../src/state/file-store.ts";
import { assertBuilt, runCli } from "../support/cli.ts";

let dir: string;
let file: string;
const endedAt = Date.parse("2026-11-26T09:30:00Z");

/** The header of dialog 57, ended by an operator, its note not said yet. */
const ended = {
  v: 2,
  id: "57",
  userId: 12,
  userName: "Mel Member",
  conversation: "dm:12,30",
  where: "direct message",
  startedAt: Date.parse("2026-11-26T09:00:00Z"),
  seq: 3,
  bytes: 300,
  step: 1,
  asked: 61,
  deadline: Date.parse("2026-11-28T09:00:00Z"),
  waiting: true,
  answered: [60],
  ended: "operator",
  note: { to: { type: "direct", to: [12], content: "Closed for the night." }, at: endedAt, self: 30 },
};

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), "bothost-end-notes-"));
  const store = await FileStore.open(join(dir, "state"));
  const dialogs = store.namespace("orders").namespace("dialogs");
  await dialogs.set("h:57", ended);
  // An ended dialog whose note was said: nothing waits for it.
  const { note: _said, ...saidHead } = ended;
  await dialogs.set("h:58", { ...saidHead, id: "58" });
  await store.close();
  file = join(dir, "bothost.yaml");
  await writeFile(
    file,
    "server:\n  url: http://127.0.0.1:9\nstate:\n  path: ./state\nbots:\n" +
      `  orders:\n    module: ./orders.ts\n    email: orders@example.com\n    api_key: \${ORDERS_KEY}\n`,
  );
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("lists an ended dialog's end note still to be said at the next start, not 'No open dialogs.'", {
  timeout: 60_000,
}, async () => {
  // One after the other: each opens the state directory, which one process holds at a time (the
  // second, meeting the first there, would say a daemon holds it: exit 1).
  const json = await runCli(["dialogs", "--json", "-c", file]);
  const text = await runCli(["dialogs", "-c", file]);
  expect(json.code).toBe(0);
  expect(JSON.parse(json.stdout)).toEqual([
    {
      bot: "orders",
      dialogs: [],
      notes: [
        {
          id: "57",
          userId: 12,
          userName: "Mel Member",
          where: "direct message",
          ended: "operator",
          endedAt: new Date(endedAt).toISOString(),
        },
      ],
    },
  ]);

  expect(text.code).toBe(0);
  expect(text.stdout).not.toContain("No open dialogs.");
  expect(text.stdout).toContain("orders: 1 ended dialog's end note to be said at the bot's next start\n");
  expect(text.stdout).toMatch(/^ {2}57 +Mel Member +direct message +2026-11-26T09:30:00Z by an operator$/m);
});
