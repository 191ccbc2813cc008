/**
 * `bothost dialogs` with no daemon running: a dialog whose answer was recorded before the stop is
 * not being handled by anyone; it is said to run at the bot's next start.
 */
import { expect, it } from "vitest";
import { dialogTable } from "../../src/cli/dialogs.ts";
import type { Config } from "../../src/config/schema.ts";
import { storedDialogs } from "../../src/daemon/stored-dialogs.ts";
import { MemoryStore } from "../../src/state/memory-store.ts";

const head = (id: string, waiting: boolean) => ({
  v: 2,
  id,
  userId: 7,
  userName: "Ada",
  conversation: "dm:7",
  where: "direct message",
  startedAt: Date.parse("2026-11-26T09:00:00Z") + Number(id),
  seq: 2,
  bytes: 100,
  step: 0,
  asked: 500,
  deadline: Date.parse("2026-11-28T09:00:00Z"),
  waiting,
  answered: waiting ? [] : [501],
});

it("lists a dialog whose answer is recorded as run at the next start, one waiting with its deadline", async () => {
  const root = new MemoryStore();
  const dialogs = root.namespace("survey").namespace("dialogs");
  await dialogs.set("h:10", head("10", true));
  await dialogs.set("h:11", head("11", false));
  const config = { bots: { survey: {} } } as unknown as Config;
  const [listed] = await storedDialogs(config, root);
  expect(listed!.dialogs.map((d) => [d.id, d.deadline, d.nextStart])).toEqual([
    ["10", "2026-11-28T09:00:00.000Z", undefined],
    ["11", undefined, true],
  ]);
  const rows = dialogTable(listed!.dialogs);
  expect(rows[1]).toMatch(/^10 .* 2026-11-28T09:00:00Z$/);
  expect(rows[2]).toMatch(/^11 .* \(answer or deadline recorded: runs at the next start\)$/);
});
