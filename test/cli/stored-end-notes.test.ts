/**
 * `bothost dialogs` with no daemon running, on a state store holding a dialog an operator ended
 * while the bot was down (or whose note's send the stop cut): its end note waits to be said at the
 * bot's next start. The listing says so (how many, for whom, of which dialog, where), in text and
 * in --json, rather than "No open dialogs.". Listings at the same moment (two operators, a script
 * running `dialogs --json` beside `dialogs`) open the state directory one at a time: one meeting
 * another's lock waits for it, and none says a daemon holds the directory. The CLI runs as a
 * subprocess; nothing is reached over the network (the config's server is never called by the
 * offline listing).
 */
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { FileStore } from "../../src/state/file-store.ts";
import { assertBuilt, runCli, spawnCli } from "../support/cli.ts";

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
  // At the same moment: the one meeting the other's hold on the state directory waits for it.
  const [json, text] = await Promise.all([
    runCli(["dialogs", "--json", "-c", file]),
    runCli(["dialogs", "-c", file]),
  ]);
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

it("two bothost dialogs meeting a third one's lock say they wait for it, then list the same", {
  timeout: 60_000,
}, async () => {
  const state = join(dir, "state");
  // A third bothost dialogs, mid-listing: it holds the directory while the two start.
  const third = await FileStore.open(state, { command: "bothost dialogs" });
  const runs = [1, 2].map(() => spawnCli(["dialogs", "--json", "-c", file]));
  const waiting = `bothost dialogs: waiting for bothost dialogs (pid ${process.pid}), which holds the state directory, up to 5 s\n`;
  try {
    // Released once both said they wait (or one ended without it: the checks below say how).
    const said = (run: (typeof runs)[number]) => run.stderr().includes(waiting);
    const ended = { any: false };
    for (const run of runs) void run.exited.then(() => (ended.any = true));
    await expect.poll(() => ended.any || runs.every(said), { timeout: 20_000 }).toBe(true);
  } finally {
    await third.close();
  }
  const exits = await Promise.all(runs.map((run) => run.exited));
  for (const [i, run] of runs.entries()) {
    expect(run.stderr()).toBe(
      `${waiting}No daemon answers: the open dialogs as the state store keeps them.\n`,
    );
    expect(exits[i]!.code).toBe(0);
  }
  const [first, second] = runs.map((run) => JSON.parse(run.stdout()) as { notes: { id: string }[] }[]);
  expect(first!.map((bot) => bot.notes.map((note) => note.id))).toEqual([["57"]]);
  expect(second).toEqual(first);
  // Each released the lock.
  expect(await readdir(state)).not.toContain("LOCK");
});
