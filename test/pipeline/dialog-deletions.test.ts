/**
 * Which deletions end a waiting step: the question's message, or the one its buttons are on; in
 * the bulk form of `delete_message` and the singular one; and a `gone` entry in a dialog's log,
 * folded (the step deleted, the dialog no longer waiting).
 */
import { expect, it } from "vitest";
import { deletedIds } from "../../src/pipeline/conversation-key.ts";
import { questionAmong } from "../../src/pipeline/dialogs/dialog-deletions.ts";
import { foldLog, type LogEntry } from "../../src/pipeline/dialogs/dialog-record.ts";
import type { EventMap } from "../../src/wire/events.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { asked, memoryDialogs, waitAt } from "../support/memory-dialogs.ts";

const T0 = 1_000_000;
const deletion = (fields: object) =>
  ({ type: "delete_message", id: 0, message_type: "private", ...fields }) as EventMap["delete_message"];

it("reads the deleted ids of both forms of delete_message", () => {
  expect(deletedIds(deletion({ message_ids: [3, 5] }))).toEqual([3, 5]);
  expect(deletedIds(deletion({ message_id: 4 }))).toEqual([4]);
  expect(deletedIds(deletion({}))).toEqual([]);
});

it("the waiting question's message, or its buttons', ends the step; other messages do not", async () => {
  const dialogs = memoryDialogs(new ManualClock(T0));
  const head = await waitAt(dialogs, { id: 100, conversation: "dm:7,9", at: T0, deadline: T0 + 60_000 });
  const entry = dialogs.entry(head.id)!;
  expect(questionAmong(entry, [100, 102])).toBeUndefined();
  expect(questionAmong(entry, [100, 101])).toBe(101);
  // Asked again with its buttons on a refusal (message 105).
  const again: LogEntry = { ...asked(0, 101, T0, T0 + 60_000), btn: 105 } as LogEntry;
  await dialogs.append(entry.head, [{ t: "ans", step: 0, msg: 104, text: "x", ts: T0 / 1000 }, again], false);
  const next = dialogs.entry(head.id)!;
  expect(questionAmong(next, [105])).toBe(105);
  expect(questionAmong(next, [101])).toBe(101);
  // Answered: no deletion ends it.
  expect(dialogs.match("dm:7,9", 7, { id: 106, timestamp: T0 / 1000 })).toMatchObject({ entry: next });
  expect(questionAmong(next, [101, 105])).toBeUndefined();
});

it("a gone entry: the step is deleted, the dialog no longer waits; a log without one folds as before", async () => {
  const clock = new ManualClock(T0);
  const dialogs = memoryDialogs(clock);
  const head = await waitAt(dialogs, { id: 100, conversation: "dm:7,9", at: T0, deadline: T0 + 60_000 });
  const before = await dialogs.log.read(head);
  expect(before.steps[0]?.deleted).toBeUndefined();
  const record = await dialogs.timeOut(dialogs.entry(head.id)!, 101);
  expect(record.steps[0]).toMatchObject({ deleted: true, answers: [] });
  expect(record.steps[0]?.timedOut).toBeUndefined();
  expect(record.waiting).toBe(false);
  const reread = await dialogs.log.read((await dialogs.log.head(head.id))!);
  expect(reread.steps[0]?.deleted).toBe(true);
  expect(foldLog(head, []).steps).toEqual([]);
});

it("a question whose send gave no id follows the message that began the dialog: that message's deletion ends nothing", async () => {
  const dialogs = memoryDialogs(new ManualClock(T0));
  // Begun by message 100; its question kept with the first message's id (no id of its own).
  const head = await waitAt(dialogs, { id: 100, conversation: "dm:7,9", at: T0, deadline: T0 + 60_000 });
  await dialogs.append(dialogs.entry(head.id)!.head, [asked(1, 100, T0, T0 + 60_000)], false);
  expect(questionAmong(dialogs.entry(head.id)!, [100])).toBeUndefined();
});
