/** The log writer on its own: synchronous positional writes, and what still needs an fdatasync. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { JournalWriter, readJournal } from "../../src/state/_journal.ts";
import { test } from "../support/state.ts";

const HEADER = '{"format":"bothost-state-log","version":1,"generation":4}\n';

test("write() puts the bytes in the file before it returns, in order", async ({ dir }) => {
  const file = join(dir, "state.log");
  const writer = await JournalWriter.create(file, 4);
  expect(writer.bytes).toBe(HEADER.length);
  writer.write('{"op":"set","key":"a","value":1}\n');
  writer.write('{"op":"del","key":"a"}\n');
  expect(readFileSync(file, "utf8")).toBe(
    `${HEADER}{"op":"set","key":"a","value":1}\n{"op":"del","key":"a"}\n`,
  );
  expect(writer.bytes).toBe(readFileSync(file).length);
  await writer.close();
  expect((await readJournal(file))?.records).toEqual([
    { key: "a", entry: { text: "1" } },
    { key: "a", entry: undefined },
  ]);
});

test("tracks written-but-unsynced bytes, including writes made while a sync runs", async ({ dir }) => {
  const writer = await JournalWriter.create(join(dir, "state.log"), 4);
  expect(writer.unsynced).toBe(false); // create fsyncs the header
  writer.write('{"op":"del","key":"a"}\n');
  expect(writer.unsynced).toBe(true);
  await writer.sync();
  expect(writer.unsynced).toBe(false);
  writer.write('{"op":"del","key":"b"}\n');
  const syncing = writer.sync();
  writer.write('{"op":"del","key":"c"}\n'); // after the sync started: not covered by it
  await syncing;
  expect(writer.unsynced).toBe(true);
  await writer.sync();
  expect(writer.unsynced).toBe(false);
  await writer.close();
});

test("refuses to write or sync once closed", async ({ dir }) => {
  const writer = await JournalWriter.create(join(dir, "state.log"), 4);
  await writer.close();
  expect(() => writer.write("x\n")).toThrow("the log file is already closed");
  await expect(writer.sync()).rejects.toThrow("the log file is already closed");
});
