/**
 * The log writer on its own: synchronous positional writes, and what still needs an fdatasync;
 * and both files read back a value at a time, as their writers lay them out.
 */
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { framedRecord, framedSnapshot } from "../../src/state/_framed.ts";
import {
  JournalWriter,
  readJournal,
  readSnapshot,
  recordLine,
  snapshotText,
} from "../../src/state/_journal.ts";
import type { TableEntry } from "../../src/state/_view.ts";
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

/** Entries whose framing a value-by-value read could get wrong, each as the table keeps it. */
const TRICKY: Array<[string, TableEntry]> = [
  ["a", { text: "5" }],
  ["ns/number with expiry", { text: "-1.5e+30", expiresAt: 1_795_998_011_447 }],
  ['q"uote', { text: '"ends in digits 12"' }],
  ["back\\slash", { text: '{"a":1,"expiresAt":5}' }],
  ["ünï/cödé", { text: '["x,\\"value\\":1",null,true]', expiresAt: 1.5 }],
  ['x":{"value":1', { text: '{"nested":{"v":"line\\nbreak \u2028"}}', expiresAt: 1e21 }],
  ['k","value":', { text: '""' }],
];

describe("the store's files read value by value", () => {
  test("a snapshot as snapshotText writes it: each value's text as written", () => {
    const text = snapshotText(7, TRICKY);
    expect(framedSnapshot(Buffer.from(text))).toEqual({ generation: 7, entries: TRICKY });
    expect(framedSnapshot(Buffer.from(snapshotText(0, [])))).toEqual({ generation: 0, entries: [] });
  });

  test("log lines as recordLine writes them; deletes and other layouts are left to a whole parse", () => {
    for (const [key, entry] of TRICKY) {
      const line = Buffer.from(`${recordLine(key, entry)}\n`);
      expect(framedRecord(line, 0, line.length - 1)).toEqual({ key, entry });
    }
    for (const line of [
      recordLine("a", undefined),
      '{"op":"set","key":"a","value": 1}',
      '{"key":"a","op":"set","value":1}',
    ])
      expect(framedRecord(Buffer.from(line), 0, line.length)).toBeUndefined();
  });

  test("a snapshot laid out otherwise, or damaged, is parsed whole: read, or refused", async ({ dir }) => {
    const file = join(dir, "state.json");
    const entries = Object.fromEntries(
      TRICKY.map(([key, e]) => [key, { ...e, value: JSON.parse(e.text), text: undefined }]),
    );
    await writeFile(
      file,
      JSON.stringify({ format: "bothost-state-snapshot", version: 1, generation: 2, entries }, null, 2),
    );
    expect(framedSnapshot(readFileSync(file))).toBeUndefined();
    expect(await readSnapshot(file)).toEqual({ generation: 2, entries: TRICKY });

    const good = snapshotText(3, TRICKY);
    for (const damaged of [
      good.replace('"value":5', '"value":{"b":}'),
      good.replace('"value":5', '"value":5,'),
      good.replace("}}\n", ",\n}}\n"),
      good.slice(0, -4),
      good.replace('"generation":3', '"generation":03'),
    ]) {
      expect(framedSnapshot(Buffer.from(damaged))).toBeUndefined();
      await writeFile(file, damaged);
      await expect(readSnapshot(file)).rejects.toMatchObject({ code: "STATE_CORRUPT" });
    }
  });

  test("a log mixing both layouts reads in order, naming the line a damaged record is on", async ({
    dir,
  }) => {
    const file = join(dir, "state.log");
    const lines = [
      recordLine("a", { text: "1" }),
      '{"op":"set","key":"a","value": [2]}',
      recordLine("a", undefined),
    ];
    await writeFile(file, `${HEADER}${lines.join("\n")}\n${recordLine("b", TRICKY[1]![1])}\n`);
    expect((await readJournal(file))?.records).toEqual([
      { key: "a", entry: { text: "1" } },
      { key: "a", entry: { text: "[2]" } },
      { key: "a", entry: undefined },
      { key: "b", entry: TRICKY[1]![1] },
    ]);
    await writeFile(file, `${HEADER}${lines[0]}\n{"op":"set","key":"a","value":[}\n`);
    await expect(readJournal(file)).rejects.toThrow(`State file ${file} is damaged at line 3`);
  });
});
